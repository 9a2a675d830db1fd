import { isoOrNull } from '@app/core';
import type { SqlDatabase } from '@app/event-store';

/** A row of the endpoints read model (the endpoints projection writes it). */
export interface EndpointRow {
  id: string;
  org_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | string | null;
  revision: string | number;
  created_at: Date | string;
  updated_at: Date | string;
  deleted_at: Date | string | null;
}

/** What the fan-out needs of an endpoint. */
export type FanOutTarget = Pick<EndpointRow, 'id' | 'org_id' | 'event_types' | 'created_at'>;

export const endpointView = (r: EndpointRow) => ({
  id: r.id,
  url: r.url,
  event_types: r.event_types,
  description: r.description,
  enabled: r.enabled,
  disabled_reason: r.disabled_reason,
  disabled_at: isoOrNull(r.disabled_at),
  created_at: isoOrNull(r.created_at)!,
  updated_at: isoOrNull(r.updated_at)!,
});
export type EndpointView = ReturnType<typeof endpointView>;

/** Reads of the endpoints read model (and of the failure streak the deliveries projection keeps). */
export abstract class EndpointRows {
  abstract byId(id: string): Promise<EndpointRow | null>;
  /** The organization's live endpoints, oldest first. */
  abstract list(orgId: string): Promise<EndpointRow[]>;
  /** Enabled, live endpoints of these organizations. */
  abstract fanOutTargets(orgIds: string[]): Promise<FanOutTarget[]>;
  /** Since when every attempt to the endpoint has failed; null when its last one succeeded. */
  abstract failingSince(endpointId: string): Promise<Date | null>;
}

export class SqlEndpointRows extends EndpointRows {
  constructor(private readonly db: SqlDatabase) {
    super();
  }

  async byId(id: string): Promise<EndpointRow | null> {
    const [row] = await this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id], { name: 'webhook_endpoint_by_id' });
    return row ?? null;
  }

  list(orgId: string): Promise<EndpointRow[]> {
    return this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE org_id = $1 AND deleted_at IS NULL ORDER BY created_at, id', [orgId]);
  }

  async fanOutTargets(orgIds: string[]): Promise<FanOutTarget[]> {
    if (orgIds.length === 0) return [];
    return this.db.query<FanOutTarget>(
      `SELECT id, org_id, event_types, created_at FROM webhook_endpoints WHERE org_id = ANY($1::text[]) AND enabled AND deleted_at IS NULL ORDER BY id`,
      [orgIds],
      { name: 'webhook_fan_out_targets' },
    );
  }

  async failingSince(endpointId: string): Promise<Date | null> {
    const [row] = await this.db.query<{ since: Date | string }>('SELECT since FROM webhook_endpoint_failing WHERE endpoint_id = $1', [endpointId]);
    return row ? new Date(row.since) : null;
  }
}
