import { AppError, newPrefixedId, isoOrNull } from '@app/core';
import { EventStore, WrongExpectedVersion } from '@app/event-store';
import { apiKeyMatches, generateApiKey, KeyMode, ParsedApiKey } from '../domain/api-key';
import { Scope } from '../domain/scopes';
import { createApiKey, createOrganization, OrganizationKind, revokeApiKey } from '../domain/organization.aggregate';
import { AccessReadModel, KeyRow } from './access-read-model.repository';
import { OrganizationRepository } from './organization.repository';

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

const iso = isoOrNull;

/**
 * Organizations and API keys. Each change is an event on the organization's stream; the read
 * model is written in the same transaction, so a revoked key fails at once on every process
 * (they all read the same table; nothing is cached).
 */
export class AccessService {
  private readonly organizations: OrganizationRepository;

  constructor(
    private readonly reads: AccessReadModel,
    store: EventStore,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.organizations = new OrganizationRepository(store);
  }

  async createOrganization(name: string, kind: OrganizationKind = 'standard'): Promise<Organization> {
    const orgId = newPrefixedId('org', 12);
    await this.organizations.save(orgId, createOrganization(orgId, name, kind), null);
    return (await this.getOrganization(orgId))!;
  }

  async getOrganization(orgId: string): Promise<Organization | null> {
    const row = await this.reads.organization(orgId);
    return row ? { ...row, created_at: iso(row.created_at)! } : null;
  }

  countOrganizations(): Promise<number> {
    return this.reads.countOrganizations();
  }

  async createApiKey(
    orgId: string,
    options: { scopes: Scope[]; mode: KeyMode; name?: string | null; expiresAt?: Date | null },
  ): Promise<CreatedApiKey> {
    const key = generateApiKey(options.mode);
    const events = createApiKey(await this.organizations.load(orgId), orgId, key, options);
    // Keys do not depend on each other: a new one appends whatever else the organization recorded meanwhile.
    await this.organizations.save(orgId, events, 'stream_exists');
    const data = events[0].data;
    return { key_id: key.keyId, key: key.secret, org_id: orgId, scopes: data.scopes, mode: key.mode, expires_at: data.expires_at };
  }

  async listApiKeys(orgId: string): Promise<ApiKeyView[]> {
    return (await this.reads.keysOf(orgId)).map((r) => this.view(r));
  }

  /** Another organization's key answers exactly as a missing one: 404. */
  async getApiKey(keyId: string, orgId?: string): Promise<ApiKeyView> {
    const row = await this.reads.key(keyId);
    if (!row || (orgId !== undefined && row.org_id !== orgId)) throw new AppError('not_found', `key ${keyId} not found`, 404);
    return this.view(row);
  }

  async revokeApiKey(keyId: string, options: { orgId?: string; reason?: string } = {}): Promise<ApiKeyView> {
    const key = await this.getApiKey(keyId, options.orgId);
    for (;;) {
      const org = await this.organizations.load(key.org_id);
      const events = revokeApiKey(org!, keyId, options.reason ?? null);
      if (events.length === 0) break; // revoking twice changes nothing
      try {
        await this.organizations.save(key.org_id, events, org);
        break;
      } catch (err) {
        if (!(err instanceof WrongExpectedVersion)) throw err; // the organization changed meanwhile: decide again
      }
    }
    return this.getApiKey(keyId);
  }

  /**
   * The principal for a well-formed key, or null when it is unknown, wrong, revoked or expired.
   * The row is read for every request (a revoked key fails at once everywhere); the lookups of
   * one moment share one query.
   */
  async authenticate(key: ParsedApiKey): Promise<Principal | null> {
    const row = await this.reads.keyRow(key.keyId);
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
