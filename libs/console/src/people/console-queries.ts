import { isoOrNull } from '@app/core';
import type { Role } from '../domain/roles';
import type { SignInMethod } from '../domain/session.aggregate';

export interface UserRow {
  user_id: string;
  org_id: string;
  email: string;
  display_name: string;
  role: Role;
  password_hash: string | null;
  invited_by: string;
  created_at: Date | string;
  updated_at: Date | string;
  /** Set once the person is deactivated: they sign in no more. */
  deactivated_at?: Date | string | null;
}
export interface SessionRow {
  session_id: string;
  token_hash: string;
  org_id: string;
  user_id: string;
  method: SignInMethod;
  created_at: Date | string;
  expires_at: Date | string;
  revoked_at: Date | string | null;
  revoked_reason: string | null;
}
export interface SignInLinkRow {
  link_id: string;
  token_hash: string;
  org_id: string;
  user_id: string;
  created_at: Date | string;
  expires_at: Date | string;
  redeemed_at: Date | string | null;
}

/** Reads of the console read model (written only by the console projection). */
export abstract class ConsoleQueries {
  abstract user(userId: string): Promise<UserRow | null>;
  /** The users an address is, one per organization (oldest first, at most 10). */
  abstract usersByEmail(email: string): Promise<UserRow[]>;
  abstract usersOf(orgId: string): Promise<UserRow[]>;
  abstract countUsers(orgId: string): Promise<number>;
  abstract session(sessionId: string): Promise<SessionRow | null>;
  abstract sessionByTokenHash(tokenHash: string): Promise<SessionRow | null>;
  abstract sessionsOf(orgId: string, userId?: string): Promise<SessionRow[]>;
  /** Every session of a person not yet revoked, with no bound: what a password change or a deactivation must end. */
  abstract openSessionsOf(orgId: string, userId: string): Promise<SessionRow[]>;
  abstract linkByTokenHash(tokenHash: string): Promise<SignInLinkRow | null>;
}

/** A user as shown: never the password hash. */
export const userView = (r: UserRow) => ({
  user_id: r.user_id,
  org_id: r.org_id,
  email: r.email,
  display_name: r.display_name,
  role: r.role,
  has_password: r.password_hash !== null,
  invited_by: r.invited_by,
  created_at: isoOrNull(r.created_at)!,
  updated_at: isoOrNull(r.updated_at)!,
  deactivated_at: isoOrNull(r.deactivated_at ?? null),
});
export type UserView = ReturnType<typeof userView>;

/** A session as shown: never the token nor its hash; its status as of `now`. */
export function sessionView(r: SessionRow, now: Date) {
  const expiresAt = isoOrNull(r.expires_at)!;
  const status = r.revoked_at ? 'revoked' : Date.parse(expiresAt) <= now.getTime() ? 'expired' : 'active';
  return {
    session_id: r.session_id,
    org_id: r.org_id,
    user_id: r.user_id,
    method: r.method,
    created_at: isoOrNull(r.created_at)!,
    expires_at: expiresAt,
    revoked_at: isoOrNull(r.revoked_at ?? null),
    status: status as 'active' | 'revoked' | 'expired',
  };
}
export type SessionView = ReturnType<typeof sessionView>;
