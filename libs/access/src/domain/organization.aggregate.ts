import { DomainError } from '@app/core';
import type { KeyMode } from './api-key';
import type { Scope } from './scopes';

/**
 * The Organization aggregate with its API keys: one stream per organization, opened by
 * OrganizationCreated; ApiKeyCreated carries a key's hash (never the key), ApiKeyRevoked ends it.
 */
export type OrganizationKind = 'standard' | 'sandbox' | 'demo';

/** The stored event types of an organization stream (one constant per type). */
export const ORGANIZATION_CREATED = 'organization.created';
export const API_KEY_CREATED = 'api_key.created';
export const API_KEY_REVOKED = 'api_key.revoked';

export interface OrganizationCreated {
  org_id: string;
  name: string;
  kind: OrganizationKind;
}

/** Carries the key's hash, never the key. */
export interface ApiKeyCreated {
  key_id: string;
  org_id: string;
  mode: KeyMode;
  scopes: Scope[];
  secret_hash: string;
  name: string | null;
  /**
   * Who holds the key (a person or team, as the organization names them): the reviewer of a
   * payment may be required not to be its requester, nor another key of the same owner.
   * Absent on keys created before owners were recorded.
   */
  owner?: string | null;
  expires_at: string | null;
}

export interface ApiKeyRevoked {
  key_id: string;
  org_id: string;
  reason: string | null;
}

export interface OrganizationState {
  org_id: string;
  /** Key id → revoked. */
  keys: Map<string, { revoked: boolean }>;
  revision: number;
}

export function applyOrganization(state: OrganizationState | null, event: { type: string; data: unknown }): OrganizationState {
  if (event.type === ORGANIZATION_CREATED) {
    if (state) throw new DomainError('illegal_transition', 'the organization exists already');
    return { org_id: (event.data as OrganizationCreated).org_id, keys: new Map(), revision: 0 };
  }
  if (!state) throw new DomainError('illegal_transition', `${event.type} before the organization exists`);
  const keys = new Map(state.keys);
  if (event.type === API_KEY_CREATED) keys.set((event.data as ApiKeyCreated).key_id, { revoked: false });
  else if (event.type === API_KEY_REVOKED) keys.set((event.data as ApiKeyRevoked).key_id, { revoked: true });
  else throw new DomainError('illegal_transition', `${event.type} is not an organization event`);
  return { ...state, keys, revision: state.revision + 1 };
}

export const foldOrganization = (events: readonly { type: string; data: unknown }[]) =>
  events.reduce<OrganizationState | null>((s, e) => applyOrganization(s, e), null);

export function createOrganization(orgId: string, name: string, kind: OrganizationKind) {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) throw new DomainError('validation_failed', 'organization name must be 1..200 characters');
  const data: OrganizationCreated = { org_id: orgId, name: trimmed, kind };
  return [{ type: ORGANIZATION_CREATED, data }];
}

/** A new key for an existing organization; `key` is generated outside (randomness is not the domain's). */
export function createApiKey(
  org: OrganizationState | null,
  orgId: string,
  key: { keyId: string; mode: KeyMode; secretHash: string },
  options: { scopes: Scope[]; name?: string | null; owner?: string | null; expiresAt?: Date | null },
) {
  if (!org) throw new DomainError('not_found', `organization ${orgId} not found`);
  if (options.scopes.length === 0) throw new DomainError('validation_failed', 'a key needs at least one scope');
  const owner = options.owner?.trim() || null;
  if (owner !== null && owner.length > 200) throw new DomainError('validation_failed', 'a key owner is at most 200 characters');
  const data: ApiKeyCreated = {
    key_id: key.keyId,
    org_id: orgId,
    mode: key.mode,
    scopes: [...new Set(options.scopes)],
    secret_hash: key.secretHash,
    name: options.name ?? null,
    owner,
    expires_at: options.expiresAt ? options.expiresAt.toISOString() : null,
  };
  return [{ type: API_KEY_CREATED, data }];
}

/** Revoking twice changes nothing (no event). */
export function revokeApiKey(org: OrganizationState, keyId: string, reason: string | null) {
  const key = org.keys.get(keyId);
  if (!key) throw new DomainError('not_found', `key ${keyId} not found`);
  if (key.revoked) return [];
  const data: ApiKeyRevoked = { key_id: keyId, org_id: org.org_id, reason };
  return [{ type: API_KEY_REVOKED, data }];
}
