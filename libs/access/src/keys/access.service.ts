import { AppError, BatchLoader, newPrefixedId, isoOrNull } from '@app/core';
import { NewEvent, SqlDatabase, SqlEventStore } from '@app/event-store';
import { apiKeyMatches, generateApiKey, KeyMode, ParsedApiKey } from '../domain/api-key';
import { Scope } from '../domain/scopes';
import { ApiKeyCreated, ApiKeyRevoked, applyAccessEvent, OrganizationCreated, OrganizationKind, organizationStream } from './access.events';

export interface Organization {
  org_id: string;
  name: string;
  kind: OrganizationKind;
  created_at: string;
}

/** A key as listed: never the secret, never its hash. */
export interface ApiKeyView {
  key_id: string;
  org_id: string;
  mode: KeyMode;
  scopes: Scope[];
  name: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  status: 'active' | 'revoked' | 'expired';
}

export interface CreatedApiKey {
  key_id: string;
  /** Shown once, at creation. */
  key: string;
  org_id: string;
  scopes: Scope[];
  mode: KeyMode;
  expires_at: string | null;
}

/** Who is calling, once a bearer key checks out. */
export interface Principal {
  orgId: string;
  keyId: string;
  scopes: Scope[];
  mode: KeyMode;
}

/** The read-model row: the creation event's facts plus when it was created and revoked. */
type KeyRow = Omit<ApiKeyCreated, 'expires_at'> & {
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
};

const iso = isoOrNull;

/**
 * Organizations and API keys. Each change is an event on the organization's stream; the read
 * model is written in the same transaction, so a revoked key fails at once on every process
 * (they all read the same table; nothing is cached).
 */
export class AccessService {
  private readonly keyRows = new BatchLoader<KeyRow>(async (ids) => {
    const rows = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE key_id = ANY($1::text[])', [ids], { name: 'access_keys_by_ids' });
    return new Map(rows.map((r) => [r.key_id, r]));
  });

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private async record(orgId: string, events: NewEvent[], expectedRevision: 'no_stream' | 'stream_exists'): Promise<void> {
    await this.db.transaction(async (tx) => {
      const result = await this.store.appendIn(tx, organizationStream(orgId), events, expectedRevision);
      for (const e of result.events) await applyAccessEvent(e, tx);
    });
  }

  async createOrganization(name: string, kind: OrganizationKind = 'standard'): Promise<Organization> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 200) throw new AppError('validation_failed', 'organization name must be 1..200 characters', 400);
    const data: OrganizationCreated = { org_id: newPrefixedId('org', 12), name: trimmed, kind };
    await this.record(data.org_id, [{ type: 'OrganizationCreated', data }], 'no_stream');
    return (await this.getOrganization(data.org_id))!;
  }

  async getOrganization(orgId: string): Promise<Organization | null> {
    const [row] = await this.db.query<Organization & { created_at: Date | string }>(
      'SELECT org_id, name, kind, created_at FROM organizations WHERE org_id = $1',
      [orgId],
    );
    return row ? { ...row, created_at: iso(row.created_at)! } : null;
  }

  async countOrganizations(): Promise<number> {
    const [row] = await this.db.query<{ n: string | number }>('SELECT count(*) AS n FROM organizations');
    return Number(row.n);
  }

  async createApiKey(
    orgId: string,
    options: { scopes: Scope[]; mode: KeyMode; name?: string | null; expiresAt?: Date | null },
  ): Promise<CreatedApiKey> {
    if (!(await this.getOrganization(orgId))) throw new AppError('not_found', `organization ${orgId} not found`, 404);
    if (options.scopes.length === 0) throw new AppError('validation_failed', 'a key needs at least one scope', 400);
    const key = generateApiKey(options.mode);
    const data: ApiKeyCreated = {
      key_id: key.keyId,
      org_id: orgId,
      mode: key.mode,
      scopes: [...new Set(options.scopes)],
      secret_hash: key.secretHash,
      name: options.name ?? null,
      expires_at: options.expiresAt ? options.expiresAt.toISOString() : null,
    };
    await this.record(orgId, [{ type: 'ApiKeyCreated', data }], 'stream_exists');
    return { key_id: key.keyId, key: key.secret, org_id: orgId, scopes: data.scopes, mode: key.mode, expires_at: data.expires_at };
  }

  async listApiKeys(orgId: string): Promise<ApiKeyView[]> {
    const rows = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE org_id = $1 ORDER BY created_at, key_id', [orgId]);
    return rows.map((r) => this.view(r));
  }

  /** Another organization's key answers exactly as a missing one: 404. */
  async getApiKey(keyId: string, orgId?: string): Promise<ApiKeyView> {
    const [row] = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE key_id = $1', [keyId]);
    if (!row || (orgId !== undefined && row.org_id !== orgId)) throw new AppError('not_found', `key ${keyId} not found`, 404);
    return this.view(row);
  }

  async revokeApiKey(keyId: string, options: { orgId?: string; reason?: string } = {}): Promise<ApiKeyView> {
    const key = await this.getApiKey(keyId, options.orgId);
    if (key.revoked_at) return key; // revoking twice changes nothing
    const data: ApiKeyRevoked = { key_id: keyId, org_id: key.org_id, reason: options.reason ?? null };
    await this.record(key.org_id, [{ type: 'ApiKeyRevoked', data }], 'stream_exists');
    return this.getApiKey(keyId);
  }

  /**
   * The principal for a well-formed key, or null when it is unknown, wrong, revoked or expired.
   * The row is read for every request (a revoked key fails at once everywhere); the lookups of
   * one moment share one query.
   */
  async authenticate(key: ParsedApiKey): Promise<Principal | null> {
    const row = await this.keyRows.load(key.keyId);
    // Hash and compare even when the row is missing, so timing does not reveal which ids exist.
    const matches = apiKeyMatches(key.secret, row?.secret_hash ?? '0'.repeat(64));
    if (!row || !matches || row.mode !== key.mode) return null;
    if (this.view(row).status !== 'active') return null;
    return { orgId: row.org_id, keyId: row.key_id, scopes: row.scopes, mode: row.mode };
  }

  private view(r: KeyRow): ApiKeyView {
    const expiresAt = iso(r.expires_at);
    const status = r.revoked_at ? 'revoked' : expiresAt && Date.parse(expiresAt) <= this.now().getTime() ? 'expired' : 'active';
    return {
      key_id: r.key_id,
      org_id: r.org_id,
      mode: r.mode,
      scopes: r.scopes,
      name: r.name,
      created_at: iso(r.created_at)!,
      expires_at: expiresAt,
      revoked_at: iso(r.revoked_at),
      status,
    };
  }
}
