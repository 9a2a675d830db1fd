import { DomainError } from '@app/core';
import type { KeyMode } from './api-key';
import { scopesBeyond, type Scope } from './scopes';

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
  /**
   * Who made the key: the creating key's id (`key_…`, over HTTP), `user:<id>` (a console user) or
   * `operator` (the admin CLI). The review rules treat a key and the keys in its creator chain as
   * one principal. Absent on keys created before it was recorded (and on the demo and sandbox keys).
   */
  created_by?: string | null;
}

export interface ApiKeyRevoked {
  key_id: string;
  org_id: string;
  reason: string | null;
  /** Who revoked it: a key id, `user:<id>` or `operator`. Absent on revocations recorded before it was. */
  revoked_by?: string | null;
}

/** What the aggregate knows of one key: enough to decide who may create and revoke what. */
export interface KeyState {
  revoked: boolean;
  mode: KeyMode;
  scopes: Scope[];
  expiresAt: string | null;
}

export interface OrganizationState {
  org_id: string;
  keys: Map<string, KeyState>;
  revision: number;
}

/** How many keys of one organization may be active at once, unless `MAX_ACTIVE_API_KEYS` says otherwise. */
export const DEFAULT_MAX_ACTIVE_API_KEYS = 100;

const isKeyId = (actor: string | null | undefined): actor is string => typeof actor === 'string' && actor.startsWith('key_');
const isActive = (k: KeyState, now: Date) => !k.revoked && (k.expiresAt === null || Date.parse(k.expiresAt) > now.getTime());

export function applyOrganization(state: OrganizationState | null, event: { type: string; data: unknown }): OrganizationState {
  if (event.type === ORGANIZATION_CREATED) {
    if (state) throw new DomainError('illegal_transition', 'the organization exists already');
    return { org_id: (event.data as OrganizationCreated).org_id, keys: new Map(), revision: 0 };
  }
  if (!state) throw new DomainError('illegal_transition', `${event.type} before the organization exists`);
  const keys = new Map(state.keys);
  if (event.type === API_KEY_CREATED) {
    const e = event.data as ApiKeyCreated;
    keys.set(e.key_id, { revoked: false, mode: e.mode, scopes: e.scopes, expiresAt: e.expires_at ?? null });
  } else if (event.type === API_KEY_REVOKED) {
    const id = (event.data as ApiKeyRevoked).key_id;
    const k = keys.get(id);
    if (k) keys.set(id, { ...k, revoked: true });
  }
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

/**
 * A new key for an existing organization; `key` is generated outside (randomness is not the domain's).
 * When a key creates it (`createdBy` is its id) the new key may not outdo its creator: the same
 * mode (a test key mints no live key), only scopes it holds, and no later expiry than its own
 * (refused, never silently shortened). At most `maxActiveKeys` keys of the organization are active.
 */
export function createApiKey(
  org: OrganizationState | null,
  orgId: string,
  key: { keyId: string; mode: KeyMode; secretHash: string },
  options: { scopes: Scope[]; name?: string | null; owner?: string | null; expiresAt?: Date | null; createdBy?: string | null },
  limits: { now: Date; maxActiveKeys: number } = { now: new Date(), maxActiveKeys: DEFAULT_MAX_ACTIVE_API_KEYS },
) {
  if (!org) throw new DomainError('not_found', `organization ${orgId} not found`);
  if (options.scopes.length === 0) throw new DomainError('validation_failed', 'a key needs at least one scope');
  const owner = options.owner?.trim() || null;
  if (owner !== null && owner.length > 200) throw new DomainError('validation_failed', 'a key owner is at most 200 characters');
  const expiresAt = options.expiresAt ? options.expiresAt.toISOString() : null;
  const createdBy = options.createdBy?.trim() || null;
  if (isKeyId(createdBy)) {
    const creator = org.keys.get(createdBy);
    if (!creator || !isActive(creator, limits.now)) throw new DomainError('forbidden', `key ${createdBy} is not an active key of organization ${orgId}`);
    if (creator.mode !== key.mode) {
      throw new DomainError('key_mode_mismatch', `a ${creator.mode} key can only create ${creator.mode} keys`, { creator_mode: creator.mode, requested_mode: key.mode });
    }
    const beyond = scopesBeyond(creator.scopes, options.scopes);
    if (beyond.length) throw new DomainError('insufficient_scope', `A key can only be given scopes its creator holds; missing: ${beyond.join(', ')}`, { missing_scopes: beyond });
    if (creator.expiresAt !== null && (expiresAt === null || Date.parse(expiresAt) > Date.parse(creator.expiresAt))) {
      throw new DomainError('key_expiry_beyond_creator', `the creating key expires at ${creator.expiresAt}: give the new key an expires_at no later than that`, {
        creator_expires_at: creator.expiresAt,
      });
    }
  }
  const active = [...org.keys.values()].filter((k) => isActive(k, limits.now)).length;
  if (active >= limits.maxActiveKeys) {
    throw new DomainError('api_key_limit_reached', `organization ${orgId} has ${active} active keys, the most allowed (${limits.maxActiveKeys}); revoke one first`, {
      active_keys: active,
      max_active_keys: limits.maxActiveKeys,
    });
  }
  const data: ApiKeyCreated = {
    key_id: key.keyId,
    org_id: orgId,
    mode: key.mode,
    scopes: [...new Set(options.scopes)],
    secret_hash: key.secretHash,
    name: options.name ?? null,
    owner,
    expires_at: expiresAt,
    ...(createdBy ? { created_by: createdBy } : {}),
  };
  return [{ type: API_KEY_CREATED, data }];
}

/**
 * Revoking twice changes nothing (no event). A key revoking (`revokedBy` its id) may revoke only
 * keys whose scopes it holds all of. Nobody but the operator (the admin CLI, which can always
 * create a key) may revoke the organization's last active key holding `keys:manage`.
 */
export function revokeApiKey(org: OrganizationState, keyId: string, reason: string | null, by: { revokedBy?: string | null; now?: Date } = {}) {
  const key = org.keys.get(keyId);
  if (!key) throw new DomainError('not_found', `key ${keyId} not found`);
  if (key.revoked) return [];
  const revokedBy = by.revokedBy?.trim() || null;
  const now = by.now ?? new Date();
  if (isKeyId(revokedBy) && revokedBy !== keyId) {
    const revoker = org.keys.get(revokedBy);
    const beyond = revoker ? scopesBeyond(revoker.scopes, key.scopes) : key.scopes;
    if (beyond.length) {
      throw new DomainError('insufficient_scope', `a key may only revoke keys whose scopes it holds; key ${keyId} also holds: ${beyond.join(', ')}`, { missing_scopes: beyond });
    }
  }
  if (revokedBy !== 'operator' && key.scopes.includes('keys:manage') && isActive(key, now)) {
    const otherManagers = [...org.keys.entries()].filter(([id, k]) => id !== keyId && k.scopes.includes('keys:manage') && isActive(k, now));
    if (otherManagers.length === 0) {
      throw new DomainError('last_key_manager', `key ${keyId} is the organization's last active key with keys:manage; create another first`);
    }
  }
  const data: ApiKeyRevoked = { key_id: keyId, org_id: org.org_id, reason, ...(revokedBy ? { revoked_by: revokedBy } : {}) };
  return [{ type: API_KEY_REVOKED, data }];
}
