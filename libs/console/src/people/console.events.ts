import { createHash } from 'node:crypto';
import type { InlineProjection, RowChange } from '@app/event-store';
import { USER_DEACTIVATED, USER_INVITED, USER_PASSWORD_SET, USER_ROLE_CHANGED, UserDeactivated, UserInvited, UserPasswordSet, UserRoleChanged } from '../domain/user.aggregate';
import {
  SESSION_REVOKED,
  SESSION_STARTED,
  SessionRevoked,
  SessionStarted,
  SIGN_IN_LINK_ISSUED,
  SIGN_IN_LINK_REDEEMED,
  SignInLinkIssued,
  SignInLinkRedeemed,
} from '../domain/session.aggregate';

/** Streams of the console's aggregates: every one starts with `console-`. */
/** A person of one organization: one stream per (organization, address), so an address may be a user in several organizations. */
export const userStream = (orgId: string, email: string) => `console-user-${createHash('sha256').update(`${orgId}\u0000${email}`, 'utf8').digest('hex').slice(0, 32)}`;
/** Before addresses were per organization, a user's stream was named by the address alone; those streams are still read. */
export const legacyUserStream = (email: string) => `console-user-${createHash('sha256').update(email, 'utf8').digest('hex').slice(0, 32)}`;
export const sessionStream = (sessionId: string) => `console-session-${sessionId}`;
export const signInLinkStream = (linkId: string) => `console-link-${linkId}`;

/** The console's read model (users, sessions, sign-in links), written with each event of its streams. */
export const consoleProjection: InlineProjection = {
  name: 'console',
  filter: { eventTypes: [USER_INVITED, USER_ROLE_CHANGED, USER_PASSWORD_SET, USER_DEACTIVATED, SESSION_STARTED, SESSION_REVOKED, SIGN_IN_LINK_ISSUED, SIGN_IN_LINK_REDEEMED], streamPrefix: 'console-' },
  tables: ['console_users', 'console_sessions', 'console_sign_in_links'],
  apply(event): RowChange[] {
    const at = event.recorded_at;
    switch (event.type) {
      case USER_INVITED: {
        const e = event.data as UserInvited;
        const row = { user_id: e.user_id, org_id: e.org_id, email: e.email, display_name: e.display_name, role: e.role, password_hash: null, invited_by: e.invited_by, created_at: at, updated_at: at, deactivated_at: null };
        return [{ op: 'insert', table: 'console_users', key: ['user_id'], row }];
      }
      case USER_ROLE_CHANGED: {
        const e = event.data as UserRoleChanged;
        return [{ op: 'update', table: 'console_users', key: { user_id: e.user_id }, set: { role: e.role, updated_at: at } }];
      }
      case USER_PASSWORD_SET: {
        const e = event.data as UserPasswordSet;
        return [{ op: 'update', table: 'console_users', key: { user_id: e.user_id }, set: { password_hash: e.password_hash, updated_at: at } }];
      }
      case USER_DEACTIVATED: {
        const e = event.data as UserDeactivated;
        return [{ op: 'update', table: 'console_users', key: { user_id: e.user_id }, set: { deactivated_at: at, updated_at: at } }];
      }
      case SESSION_STARTED: {
        const e = event.data as SessionStarted;
        const row = { session_id: e.session_id, token_hash: e.token_hash, org_id: e.org_id, user_id: e.user_id, method: e.method, created_at: at, expires_at: e.expires_at };
        return [{ op: 'insert', table: 'console_sessions', key: ['session_id'], row }];
      }
      case SESSION_REVOKED: {
        const e = event.data as SessionRevoked;
        return [{ op: 'update', table: 'console_sessions', key: { session_id: e.session_id }, set: { revoked_at: at, revoked_reason: e.reason } }];
      }
      case SIGN_IN_LINK_ISSUED: {
        const e = event.data as SignInLinkIssued;
        const row = { link_id: e.link_id, token_hash: e.token_hash, org_id: e.org_id, user_id: e.user_id, created_at: at, expires_at: e.expires_at };
        return [{ op: 'insert', table: 'console_sign_in_links', key: ['link_id'], row }];
      }
      case SIGN_IN_LINK_REDEEMED: {
        const e = event.data as SignInLinkRedeemed;
        return [{ op: 'update', table: 'console_sign_in_links', key: { link_id: e.link_id }, set: { redeemed_at: at } }];
      }
      default:
        return [];
    }
  },
};
