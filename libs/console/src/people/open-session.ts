import { newPrefixedId } from '@app/core';
import { csrfTokenFor, hashToken, newSessionToken } from '../domain/secrets';
import { SESSION_TTL_MS, SignInMethod, startSession } from '../domain/session.aggregate';
import { ConsoleQueries, sessionView, SessionView, userView, UserView } from './console-queries';
import { SessionRepository } from './console.repositories';

/** What a sign-in answers: the session's secret (the cookie's value, shown this once), its forms' CSRF token, the session and the person. */
export interface SignedIn {
  session_token: string;
  csrf_token: string;
  session: SessionView;
  user: UserView;
}

/** Starts a session for a user: a fresh 256-bit token, recorded only as its hash. */
export async function openSession(sessions: SessionRepository, reads: ConsoleQueries, user: { user_id: string; org_id: string }, method: SignInMethod, now: Date, sessionId = newPrefixedId('ses', 12)): Promise<SignedIn> {
  const token = newSessionToken();
  const events = startSession({ sessionId, orgId: user.org_id, userId: user.user_id, tokenHash: hashToken(token), method }, now, SESSION_TTL_MS);
  await sessions.save(sessionId, events, null);
  const [session, row] = await Promise.all([reads.session(sessionId), reads.user(user.user_id)]);
  return { session_token: token, csrf_token: csrfTokenFor(token), session: sessionView(session!, now), user: userView(row!) };
}
