import { DomainError } from '@app/core';
import type { Role } from './roles';
import { actorName, mayTouchOwners, UserActor } from './user.aggregate';

/**
 * Console sessions and the one-time sign-in links that open them. A session's stream holds its
 * start (the token's hash, never the token) and its end; a link's stream its issue and its one
 * redemption, appended at the revision it was loaded at, so a link opens one session at most.
 */
export const SESSION_STARTED = 'session.started';
export const SESSION_REVOKED = 'session.revoked';
export const SIGN_IN_LINK_ISSUED = 'sign_in_link.issued';
export const SIGN_IN_LINK_REDEEMED = 'sign_in_link.redeemed';

export const SESSION_TTL_MS = 12 * 3600_000;
export const LINK_TTL_MS = 30 * 60_000;
/** The first owner's link (printed at the first start) waits a day: the operator may read it later, but not for long. */
export const FIRST_OWNER_LINK_TTL_MS = 24 * 3600_000;

export type SignInMethod = 'link' | 'password';

export interface SessionStarted {
  session_id: string;
  org_id: string;
  user_id: string;
  token_hash: string;
  method: SignInMethod;
  expires_at: string;
}
export interface SessionRevoked {
  session_id: string;
  org_id: string;
  user_id: string;
  reason: 'signed_out' | 'revoked';
  revoked_by: string;
}
/**
 * Who receives a link: `issuer` (the one who asked gets it: the person for themselves, the
 * operator, or the inviter of a new account, its first credential) or `user` (sent to the person,
 * which for now is the server's log in place of an email; the issuer never sees it).
 */
export type LinkDelivery = 'issuer' | 'user';

export interface SignInLinkIssued {
  link_id: string;
  org_id: string;
  user_id: string;
  token_hash: string;
  expires_at: string;
  issued_by: string;
  /** Absent in links issued before it was recorded (those went to their issuer). */
  delivered_to?: LinkDelivery;
}
export interface SignInLinkRedeemed {
  link_id: string;
  org_id: string;
  user_id: string;
  session_id: string;
}

export interface SessionState {
  session_id: string;
  org_id: string;
  user_id: string;
  expires_at: string;
  revoked: boolean;
  revision: number;
}
export interface SignInLinkState {
  link_id: string;
  org_id: string;
  user_id: string;
  expires_at: string;
  redeemed: boolean;
  revision: number;
}

export function foldSession(events: readonly { type: string; data: unknown }[]): SessionState | null {
  return events.reduce<SessionState | null>((s, e) => {
    if (e.type === SESSION_STARTED) {
      const d = e.data as SessionStarted;
      return { session_id: d.session_id, org_id: d.org_id, user_id: d.user_id, expires_at: d.expires_at, revoked: false, revision: 0 };
    }
    if (!s || e.type !== SESSION_REVOKED) throw new DomainError('illegal_transition', `${e.type} is not a session event here`);
    return { ...s, revoked: true, revision: s.revision + 1 };
  }, null);
}

export function foldSignInLink(events: readonly { type: string; data: unknown }[]): SignInLinkState | null {
  return events.reduce<SignInLinkState | null>((s, e) => {
    if (e.type === SIGN_IN_LINK_ISSUED) {
      const d = e.data as SignInLinkIssued;
      return { link_id: d.link_id, org_id: d.org_id, user_id: d.user_id, expires_at: d.expires_at, redeemed: false, revision: 0 };
    }
    if (!s || e.type !== SIGN_IN_LINK_REDEEMED) throw new DomainError('illegal_transition', `${e.type} is not a sign-in link event here`);
    return { ...s, redeemed: true, revision: s.revision + 1 };
  }, null);
}

export function startSession(input: { sessionId: string; orgId: string; userId: string; tokenHash: string; method: SignInMethod }, now: Date, ttlMs = SESSION_TTL_MS) {
  const data: SessionStarted = {
    session_id: input.sessionId,
    org_id: input.orgId,
    user_id: input.userId,
    token_hash: input.tokenHash,
    method: input.method,
    expires_at: new Date(now.getTime() + ttlMs).toISOString(),
  };
  return [{ type: SESSION_STARTED, data }];
}

/** Ending a session twice changes nothing (no event). */
export function revokeSession(s: SessionState, reason: SessionRevoked['reason'], by: string) {
  if (s.revoked) return [];
  const data: SessionRevoked = { session_id: s.session_id, org_id: s.org_id, user_id: s.user_id, reason, revoked_by: by };
  return [{ type: SESSION_REVOKED, data }];
}

/**
 * Nobody obtains a credential for another person: a link for someone else goes to them, not to
 * the issuer, except the first link of an account just invited (the inviter made it) and the
 * operator's. An owner's link is issued only by an owner or the operator, as owners' roles are.
 */
export function issueSignInLink(
  input: { linkId: string; orgId: string; user: { user_id: string; role: Role }; tokenHash: string; newAccount?: boolean },
  by: UserActor,
  now: Date,
  ttlMs = LINK_TTL_MS,
) {
  if (input.user.role === 'owner' && !mayTouchOwners(by)) throw new DomainError('owner_role_required', 'only an owner can issue a sign-in link for an owner');
  const own = by.kind === 'user' && by.userId === input.user.user_id;
  const data: SignInLinkIssued = {
    link_id: input.linkId,
    org_id: input.orgId,
    user_id: input.user.user_id,
    token_hash: input.tokenHash,
    expires_at: new Date(now.getTime() + ttlMs).toISOString(),
    issued_by: actorName(by),
    delivered_to: own || by.kind === 'operator' || input.newAccount ? 'issuer' : 'user',
  };
  return [{ type: SIGN_IN_LINK_ISSUED, data }];
}

/** A used or expired link is refused like an unknown one: the holder learns only that it does not work. */
export function redeemSignInLink(link: SignInLinkState | null, sessionId: string, now: Date) {
  if (!link || link.redeemed || Date.parse(link.expires_at) <= now.getTime()) {
    throw new DomainError('sign_in_failed', 'This sign-in link is invalid, used or expired; ask for a new one');
  }
  const data: SignInLinkRedeemed = { link_id: link.link_id, org_id: link.org_id, user_id: link.user_id, session_id: sessionId };
  return [{ type: SIGN_IN_LINK_REDEEMED, data }];
}
