import type { EventStore, NewEvent } from '@app/event-store';
import { CREDITS_STREAM_PREFIX } from '../certificates/certificate.projection';

export const creditsStream = (orgId: string) => `${CREDITS_STREAM_PREFIX}${orgId}`;

/** An organization's credits stream, through the EventStore port (the certificates projection keeps the totals). */
export class CreditsRepository {
  constructor(private readonly store: EventStore) {}

  /** Outcomes do not depend on each other; their derived event ids make a repeat a replay. */
  async record(orgId: string, events: NewEvent[]): Promise<void> {
    await this.store.append(creditsStream(orgId), events);
  }
}

/** Credits an organization bought (CertificateReadModel reads them from the certificates read model). */
export abstract class CreditTotals {
  abstract creditsPurchased(orgId: string): Promise<number>;
}
