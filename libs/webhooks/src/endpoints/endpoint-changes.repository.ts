import type { SqlDatabase } from '@app/event-store';

/** Told (NOTIFY on PostgreSQL, in-process when embedded) after every committed endpoint change. */
export const ENDPOINTS_CHANGED_CHANNEL = 'sigil_webhook_endpoints';

/**
 * Announces endpoint changes: to this process at once (its listeners), and to every other
 * through NOTIFY on ENDPOINTS_CHANGED_CHANNEL (what the EndpointCache listens to). Without a
 * database (specs) only this process hears.
 */
export class EndpointChanges {
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly db?: Pick<SqlDatabase, 'notify' | 'listen'>) {}

  /** Runs `listener` (at once, in this process) whenever a change is announced here. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Call after the change committed. */
  async announce(): Promise<void> {
    for (const listener of this.listeners) listener();
    await this.db?.notify(ENDPOINTS_CHANGED_CHANNEL).catch(() => undefined);
  }

  /** Hears changes announced by any process; resolves with the way to stop listening. */
  async listen(onChange: () => void): Promise<() => Promise<void>> {
    if (!this.db) return async () => undefined;
    return this.db.listen(ENDPOINTS_CHANGED_CHANNEL, onChange);
  }
}
