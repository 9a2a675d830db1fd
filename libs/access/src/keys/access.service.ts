import { AppError } from '@app/core';
import { EventStore } from '@app/event-store';
import { apiKeyMatches, KeyMode, ParsedApiKey } from '../domain/api-key';
import { Scope } from '../domain/scopes';
import { OrganizationKind } from '../domain/organization.aggregate';
import { CreateApiKeyCommand, CreatedApiKey } from '../create-api-key/create-api-key.command';
import { CreateApiKeyHandler } from '../create-api-key/create-api-key.handler';
import { CreateOrganizationCommand } from '../create-organization/create-organization.command';
import { CreateOrganizationHandler } from '../create-organization/create-organization.handler';
import { RevokeApiKeyCommand } from '../revoke-api-key/revoke-api-key.command';
import { RevokeApiKeyHandler } from '../revoke-api-key/revoke-api-key.handler';
import { AccessQueries, apiKeyView, ApiKeyView, Organization, organizationView } from './access-queries';
import { OrganizationRepository } from './organization.repository';

export type { ApiKeyView, Organization } from './access-queries';
export type { CreatedApiKey } from '../create-api-key/create-api-key.command';

/** Who is calling, once a bearer key checks out. */
export interface Principal {
  orgId: string;
  keyId: string;
  scopes: Scope[];
  mode: KeyMode;
}

/**
 * The access queries (the guard's key lookup, key lists, organizations), read from the access
 * read model on every call: a revoked key fails at once on every process. Changes are the use
 * cases' (create-organization, create-api-key, revoke-api-key); the methods that change something
 * run those same handlers, for callers without a CommandBus (tests, benchmarks).
 */
export class AccessService {
  private readonly createOrg: CreateOrganizationHandler;
  private readonly createKey: CreateApiKeyHandler;
  private readonly revokeKey: RevokeApiKeyHandler;

  constructor(
    private readonly reads: AccessQueries,
    store: EventStore,
    private readonly now: () => Date = () => new Date(),
  ) {
    const organizations = new OrganizationRepository(store);
    this.createOrg = new CreateOrganizationHandler(organizations);
    this.createKey = new CreateApiKeyHandler(organizations);
    this.revokeKey = new RevokeApiKeyHandler(organizations, reads);
  }

  createOrganization(name: string, kind: OrganizationKind = 'standard'): Promise<Organization> {
    return this.createOrg.execute(new CreateOrganizationCommand(name, kind));
  }

  createApiKey(orgId: string, options: CreateApiKeyCommand['options']): Promise<CreatedApiKey> {
    return this.createKey.execute(new CreateApiKeyCommand(orgId, options));
  }

  revokeApiKey(keyId: string, options: { orgId?: string; reason?: string } = {}): Promise<ApiKeyView> {
    return this.revokeKey.execute(new RevokeApiKeyCommand(keyId, options));
  }

  async getOrganization(orgId: string): Promise<Organization | null> {
    const row = await this.reads.organization(orgId);
    return row ? organizationView(row) : null;
  }

  countOrganizations(): Promise<number> {
    return this.reads.countOrganizations();
  }

  async listApiKeys(orgId: string): Promise<ApiKeyView[]> {
    return (await this.reads.keysOf(orgId)).map((r) => apiKeyView(r, this.now()));
  }

  /** Another organization's key answers exactly as a missing one: 404. */
  async getApiKey(keyId: string, orgId?: string): Promise<ApiKeyView> {
    const row = await this.reads.key(keyId);
    if (!row || (orgId !== undefined && row.org_id !== orgId)) throw new AppError('not_found', `key ${keyId} not found`, 404);
    return apiKeyView(row, this.now());
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
    if (apiKeyView(row, this.now()).status !== 'active') return null;
    return { orgId: row.org_id, keyId: row.key_id, scopes: row.scopes, mode: row.mode };
  }
}
