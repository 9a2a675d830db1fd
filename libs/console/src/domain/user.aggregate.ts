import { DomainError } from '@app/core';
import { isRole, Role, scopesOf } from './roles';

/**
 * A person of an organization. One stream per (organization, email address), opened with
 * expected revision no_stream: an address is one user of an organization (and may be another
 * user of another organization: no answer here depends on another organization's people), and
 * two concurrent invitations of it to one organization record one. Passwords enter events only
 * as scrypt hashes.
 */
export const USER_INVITED = 'user.invited';
export const USER_ROLE_CHANGED = 'user.role_changed';
export const USER_PASSWORD_SET = 'user.password_set';
export const USER_DEACTIVATED = 'user.deactivated';

export interface UserInvited {
  user_id: string;
  org_id: string;
  email: string;
  display_name: string;
  role: Role;
  /** `user:<id>`, `api_key:<id>` or `operator` (the CLI, the first start). */
  invited_by: string;
}
export interface UserRoleChanged {
  user_id: string;
  org_id: string;
  role: Role;
  previous_role: Role;
  changed_by: string;
}
export interface UserPasswordSet {
  user_id: string;
  org_id: string;
  password_hash: string;
}

export interface UserDeactivated {
  user_id: string;
  org_id: string;
  role: Role;
  deactivated_by: string;
}

export interface UserState {
  user_id: string;
  org_id: string;
  email: string;
  display_name: string;
  role: Role;
  /** A deactivated person signs in no more (link or password), and their sessions end. */
  active: boolean;
  revision: number;
}

/** Who asks for a change: a signed-in person (with their role), an API key, or the operator. */
export type UserActor = { kind: 'user'; userId: string; role: Role } | { kind: 'api_key'; keyId: string; scopes: readonly string[] } | { kind: 'operator' };
export const actorName = (a: UserActor) => (a.kind === 'user' ? `user:${a.userId}` : a.kind === 'api_key' ? `api_key:${a.keyId}` : 'operator');

export function applyUser(state: UserState | null, event: { type: string; data: unknown }): UserState {
  if (event.type === USER_INVITED) {
    const e = event.data as UserInvited;
    return { user_id: e.user_id, org_id: e.org_id, email: e.email, display_name: e.display_name, role: e.role, active: true, revision: 0 };
  }
  if (!state) throw new DomainError('illegal_transition', `${event.type} before the user exists`);
  if (event.type === USER_ROLE_CHANGED) return { ...state, role: (event.data as UserRoleChanged).role, revision: state.revision + 1 };
  if (event.type === USER_PASSWORD_SET) return { ...state, revision: state.revision + 1 };
  if (event.type === USER_DEACTIVATED) return { ...state, active: false, revision: state.revision + 1 };
  throw new DomainError('illegal_transition', `${event.type} is not a user event`);
}

export const foldUser = (events: readonly { type: string; data: unknown }[]) => events.reduce<UserState | null>((s, e) => applyUser(s, e), null);

const EMAIL_RE = /^[^\s@<>"',;]+@[^\s@<>"',;]+\.[^\s@<>"',;]+$/;

/** The address as stored and compared: trimmed, lower case. */
export function normalizeEmail(email: string): string {
  const value = email.trim().toLowerCase();
  if (value.length > 254 || !EMAIL_RE.test(value)) throw new DomainError('validation_failed', 'email must be an email address', [{ field: 'email', message: 'must be an email address' }]);
  return value;
}

function displayName(name: string): string {
  const value = name.trim();
  // eslint-disable-next-line no-control-regex
  if (value.length === 0 || value.length > 100 || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new DomainError('validation_failed', 'display_name must be 1..100 characters, without control characters', [{ field: 'display_name', message: 'must be 1..100 characters' }]);
  }
  return value;
}

/**
 * A key grants no more than it holds: it may give (or take away) a role only when it holds every
 * scope of that role, so a users:manage key cannot make an admin who would then mint any key.
 */
function checkKeyGrants(by: UserActor, ...roles: Role[]) {
  if (by.kind !== 'api_key') return;
  const missing = [...new Set(roles.flatMap((r) => scopesOf(r).filter((s) => !by.scopes.includes(s))))];
  if (missing.length) throw new DomainError('insufficient_scope', `A key can only give or change roles whose scopes it holds itself; missing: ${missing.join(', ')}`, { missing_scopes: missing });
}

/** Owners are made only by an owner or the operator: an admin (or a key) cannot raise anyone, itself included, above admin. */
export function mayTouchOwners(by: UserActor) {
  return by.kind === 'operator' || (by.kind === 'user' && by.role === 'owner');
}

export function inviteUser(existing: UserState | null, input: { userId: string; orgId: string; email: string; displayName: string; role: string }, by: UserActor) {
  if (!isRole(input.role)) throw new DomainError('validation_failed', 'role must be owner, admin, reviewer or viewer', [{ field: 'role', message: 'must be owner, admin, reviewer or viewer' }]);
  const email = normalizeEmail(input.email);
  const name = displayName(input.displayName);
  if (existing) throw new DomainError('email_taken', `a user with the email ${email} exists already in this organization`);
  if (input.role === 'owner' && !mayTouchOwners(by)) throw new DomainError('owner_role_required', 'only an owner can make someone an owner');
  checkKeyGrants(by, input.role);
  const data: UserInvited = { user_id: input.userId, org_id: input.orgId, email, display_name: name, role: input.role, invited_by: actorName(by) };
  return [{ type: USER_INVITED, data }];
}

/** Nobody changes their own role (so an organization always keeps an owner); owners change owners. Same role: no event. */
export function changeRole(user: UserState, role: string, by: UserActor) {
  if (!isRole(role)) throw new DomainError('validation_failed', 'role must be owner, admin, reviewer or viewer', [{ field: 'role', message: 'must be owner, admin, reviewer or viewer' }]);
  if (by.kind === 'user' && by.userId === user.user_id) throw new DomainError('forbidden', 'you cannot change your own role; ask another owner or admin');
  if ((user.role === 'owner' || role === 'owner') && !mayTouchOwners(by)) throw new DomainError('owner_role_required', 'only an owner can make someone an owner or change an owner\u2019s role');
  checkKeyGrants(by, user.role, role);
  if (role === user.role) return [];
  const data: UserRoleChanged = { user_id: user.user_id, org_id: user.org_id, role, previous_role: user.role, changed_by: actorName(by) };
  return [{ type: USER_ROLE_CHANGED, data }];
}

export function setPassword(user: UserState, passwordHash: string) {
  const data: UserPasswordSet = { user_id: user.user_id, org_id: user.org_id, password_hash: passwordHash };
  return [{ type: USER_PASSWORD_SET, data }];
}

/**
 * Removing a person: by an owner or admin (a signed-in one, a key holding the person's role's
 * scopes, or the operator), never oneself; an owner only by an owner or the operator, and never
 * the organization's last active owner (`activeOwners` counts them, this person included).
 * Deactivating again changes nothing (no event).
 */
export function deactivateUser(user: UserState, by: UserActor, activeOwners: number) {
  if (!user.active) return [];
  if (by.kind === 'user' && by.userId === user.user_id) throw new DomainError('forbidden', 'you cannot deactivate yourself; ask another owner or admin');
  if (by.kind === 'user' && by.role !== 'owner' && by.role !== 'admin') throw new DomainError('forbidden', 'only an owner or admin can deactivate people');
  if (user.role === 'owner' && !mayTouchOwners(by)) throw new DomainError('owner_role_required', 'only an owner can deactivate an owner');
  checkKeyGrants(by, user.role);
  if (user.role === 'owner' && activeOwners <= 1) throw new DomainError('last_owner', 'this is the organization\u2019s last owner: make someone else an owner first');
  const data: UserDeactivated = { user_id: user.user_id, org_id: user.org_id, role: user.role, deactivated_by: actorName(by) };
  return [{ type: USER_DEACTIVATED, data }];
}
