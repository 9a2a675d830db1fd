import type { Clock } from '@app/core';
import type { SendTarget } from './endpoint-cache';
import { EndpointRows } from './endpoint-rows.repository';
import { EndpointSecrets } from './endpoint-secrets.repository';

/** The endpoint as an attempt needs it (see EndpointCache), with its secrets still live now; null when absent. */
export class SendTargets {
  constructor(
    private readonly rows: EndpointRows,
    private readonly secrets: EndpointSecrets,
    private readonly clock: Clock,
  ) {}

  async load(endpointId: string): Promise<SendTarget | null> {
    const row = await this.rows.byId(endpointId);
    if (!row) return null;
    return {
      id: row.id,
      org_id: row.org_id,
      url: row.url,
      enabled: row.enabled,
      deleted: row.deleted_at != null,
      secrets: await this.secrets.live(endpointId, this.clock.now()),
    };
  }
}
