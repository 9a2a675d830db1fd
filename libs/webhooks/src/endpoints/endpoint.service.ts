import { randomBytes } from 'node:crypto';
import { AppError, isoOrNull } from '@app/core';
import { decryptSecret, encryptSecret } from '@app/crypto';
import { NewEvent, SqlDatabase, SqlEventStore, SqlExecutor } from '@app/event-store';
import { endpointStream, WEBHOOK_EVENT_TYPES, WebhookEvents } from '../domain/event-types';
import { newEndpointId } from '../domain/ids';
import { newEndpointSecret } from '../domain/signing';
import { isTargetProblem, parseTarget } from '../domain/target';
import { TargetGuard } from '../sending/target-guard';
import { ENDPOINTS_CHANGED_CHANNEL, SendTarget } from './endpoint-cache';
import { applyEndpointEvent, EndpointCreated, EndpointDeleted, EndpointSecretRotated, EndpointUpdated } from './endpoint.events';

/** After a rotation the previous secret keeps signing beside the new one this long. */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;
export const MAX_ENDPOINTS_PER_ORG = 100;

export interface EndpointInput {
  url: string;
  event_types?: string[];
  description?: string | null;
  enabled?: boolean;
}

export interface EndpointRow {
  id: string;
  org_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | string | null;
  failing_since: Date | string | null;
  revision: string | number;
  created_at: Date | string;
  updated_at: Date | string;
  deleted_at: Date | string | null;
}

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

const secretAad = (endpointId: string, secretId: string) => `webhook-endpoint-secret:${endpointId}:${secretId}`;
const newSecretId = () => `sec_${randomBytes(8).toString('hex')}`;
/** Keeps the spec's order and drops repeats. */
const normalizeTypes = (types: readonly string[]) => WEBHOOK_EVENT_TYPES.filter((t) => types.includes(t));

/** Appends endpoint events and applies them to the read model in one transaction. */
export async function recordEndpointEvents(store: SqlEventStore, tx: SqlExecutor, endpointId: string, expected: number | 'no_stream', events: NewEvent[]) {
  const result = await store.appendIn(tx, endpointStream(endpointId), events, expected);
  for (const e of result.events) await applyEndpointEvent(e, tx);
}

/** The endpoint's row, locked for the transaction; null when absent or deleted. */
export async function lockEndpoint(tx: SqlExecutor, id: string): Promise<EndpointRow | null> {
  const [row] = await tx.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [id]);
  return row && !row.deleted_at ? row : null;
}

/**
 * Webhook endpoints of an organization: registration (with the SSRF check), changes, deletion,
 * secret rotation. Every change is an event on `webhook-endpoint-<id>` plus its read-model row,
 * written together. Another organization's endpoint answers 404, like a missing one.
 */
export class EndpointService {
  private readonly changeListeners: (() => void)[] = [];

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly kek: Buffer,
    private readonly guard: TargetGuard,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Refuses URLs that are not http(s), carry credentials, or reach non-public addresses. */
  async checkTarget(raw: string): Promise<void> {
    const target = parseTarget(raw);
    if (isTargetProblem(target)) throw new AppError('validation_failed', `Invalid url: ${target.message}`, 400, [{ field: 'url', message: target.message }]);
    const verdict = await this.guard.check(target);
    if (verdict.ok) return;
    if (verdict.kind === 'unresolvable') throw new AppError('webhook_target_unresolvable', `The webhook url's host cannot be resolved: ${verdict.message}`, 400);
    throw new AppError('webhook_target_not_allowed', `Webhook targets must be public addresses: ${verdict.message}`, 400);
  }

  async create(orgId: string, input: EndpointInput): Promise<EndpointView & { secret: string }> {
    await this.checkTarget(input.url);
    const id = newEndpointId();
    const secret = newEndpointSecret();
    const secretId = newSecretId();
    const data: EndpointCreated = {
      endpoint_id: id,
      organization_id: orgId,
      url: input.url,
      event_types: normalizeTypes(input.event_types ?? WEBHOOK_EVENT_TYPES),
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      secret_id: secretId,
    };
    await this.db.transaction(async (tx) => {
      // Serializes creations per organization so the limit holds under concurrency.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhook-endpoints:${orgId}`]);
      const [{ n }] = await tx.query<{ n: string | number }>('SELECT count(*) AS n FROM webhook_endpoints WHERE org_id = $1 AND deleted_at IS NULL', [orgId]);
      if (Number(n) >= MAX_ENDPOINTS_PER_ORG) {
        throw new AppError('webhook_endpoint_limit', `An organization may have at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints`, 409);
      }
      await recordEndpointEvents(this.store, tx, id, 'no_stream', [{ type: WebhookEvents.endpointCreated, data }]);
      await this.storeSecret(tx, id, secretId, secret);
    });
    return { ...(await this.get(orgId, id)), secret };
  }

  async list(orgId: string): Promise<{ items: EndpointView[] }> {
    const rows = await this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE org_id = $1 AND deleted_at IS NULL ORDER BY created_at, id', [orgId]);
    return { items: rows.map(endpointView) };
  }

  async get(orgId: string, id: string): Promise<EndpointView> {
    return endpointView(await this.row(orgId, id));
  }

  async row(orgId: string, id: string, executor: SqlExecutor = this.db): Promise<EndpointRow> {
    const [row] = await executor.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
    if (!row || row.org_id !== orgId || row.deleted_at) throw new AppError('not_found', `webhook endpoint ${id} not found`, 404);
    return row;
  }

  async update(orgId: string, id: string, changes: Partial<EndpointInput>): Promise<EndpointView> {
    await this.row(orgId, id);
    if (changes.url !== undefined) await this.checkTarget(changes.url);
    const data: EndpointUpdated = { endpoint_id: id, organization_id: orgId };
    if (changes.url !== undefined) data.url = changes.url;
    if (changes.event_types !== undefined) data.event_types = normalizeTypes(changes.event_types);
    if (changes.description !== undefined) data.description = changes.description;
    if (changes.enabled !== undefined) data.enabled = changes.enabled;
    await this.change(orgId, id, () => [{ type: WebhookEvents.endpointUpdated, data }]);
    return this.get(orgId, id);
  }

  async remove(orgId: string, id: string): Promise<void> {
    const data: EndpointDeleted = { endpoint_id: id, organization_id: orgId };
    await this.change(orgId, id, () => [{ type: WebhookEvents.endpointDeleted, data }]);
  }

  /** A new secret; the previous ones keep signing beside it for 24 h. Returned once, here. */
  async rotateSecret(orgId: string, id: string): Promise<{ id: string; secret: string; previous_secret_expires_at: string }> {
    const secret = newEndpointSecret();
    const secretId = newSecretId();
    const until = new Date(this.now().getTime() + SECRET_OVERLAP_MS);
    await this.change(orgId, id, async (tx) => {
      await tx.query(
        `UPDATE webhook_endpoint_secrets SET expires_at = $2::timestamptz WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2::timestamptz)`,
        [id, until.toISOString()],
      );
      await this.storeSecret(tx, id, secretId, secret);
      const data: EndpointSecretRotated = { endpoint_id: id, organization_id: orgId, secret_id: secretId, previous_secrets_expire_at: until.toISOString() };
      return [{ type: WebhookEvents.endpointSecretRotated, data }];
    });
    return { id, secret, previous_secret_expires_at: until.toISOString() };
  }

  /** The endpoint as an attempt needs it (see EndpointCache), with its secrets still live now; null when absent. */
  async sendTarget(endpointId: string): Promise<SendTarget | null> {
    const [row] = await this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [endpointId], { name: 'webhook_endpoint_by_id' });
    if (!row) return null;
    const secrets = await this.db.query<{ secret_id: string; sealed: string; expires_at: Date | string | null }>(
      `SELECT secret_id, sealed, expires_at FROM webhook_endpoint_secrets WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2)
       ORDER BY created_at DESC, secret_id`,
      [endpointId, this.now().toISOString()],
      { name: 'webhook_send_target_secrets' },
    );
    return {
      id: row.id,
      org_id: row.org_id,
      url: row.url,
      enabled: row.enabled,
      deleted: row.deleted_at !== null,
      secrets: secrets.map((r) => ({
        secret: decryptSecret(this.kek, r.sealed, secretAad(endpointId, r.secret_id)).toString('utf8'),
        expiresAt: r.expires_at === null ? null : new Date(r.expires_at).getTime(),
      })),
    };
  }

  /** Runs `listener` (at once, in this process) whenever this service announces a change. */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /** Tells this process at once, and every other through NOTIFY, that an endpoint changed; call after the commit. */
  async announceChange(): Promise<void> {
    for (const listener of this.changeListeners) listener();
    await this.db.notify(ENDPOINTS_CHANGED_CHANNEL).catch(() => undefined);
  }

  private async storeSecret(tx: SqlExecutor, endpointId: string, secretId: string, secret: string): Promise<void> {
    await tx.query('INSERT INTO webhook_endpoint_secrets (endpoint_id, secret_id, sealed, created_at) VALUES ($1, $2, $3, $4)', [
      endpointId,
      secretId,
      encryptSecret(this.kek, Buffer.from(secret, 'utf8'), secretAad(endpointId, secretId)),
      this.now().toISOString(),
    ]);
  }

  /** Locks the caller's endpoint row, builds the events, appends and applies them. */
  private async change(orgId: string, id: string, build: (tx: SqlExecutor) => NewEvent[] | Promise<NewEvent[]>): Promise<void> {
    await this.db.transaction(async (tx) => {
      const row = await lockEndpoint(tx, id);
      if (!row || row.org_id !== orgId) throw new AppError('not_found', `webhook endpoint ${id} not found`, 404);
      await recordEndpointEvents(this.store, tx, id, Number(row.revision), await build(tx));
    });
    await this.announceChange();
  }
}
