import type { AppendResult, EventStore, NewEvent } from '@app/event-store';
import { foldSession, foldSignInLink, SessionState, SignInLinkState } from '../domain/session.aggregate';
import { foldUser, UserState } from '../domain/user.aggregate';
import { consoleProjection, legacyUserStream, sessionStream, signInLinkStream, userStream } from './console.events';

const at = (state: { revision: number } | null) => (state ? state.revision : 'no_stream');

/**
 * Users through the EventStore port: one stream per (organization, address), saved at the revision
 * loaded (a new one at no_stream). A user recorded before addresses were per organization lives in
 * the stream named by the address alone: it is read (when it belongs to this organization) and
 * appended to where it is, so no event moves.
 */
export class UserRepository {
  private readonly streams = new WeakMap<UserState, string>();
  constructor(private readonly store: EventStore) {
    store.registerProjection(consoleProjection);
  }
  async load(orgId: string, email: string): Promise<UserState | null> {
    const current = foldUser(await this.store.readStream(userStream(orgId, email)));
    if (current) return current;
    const legacy = foldUser(await this.store.readStream(legacyUserStream(email)));
    if (!legacy || legacy.org_id !== orgId) return null;
    this.streams.set(legacy, legacyUserStream(email));
    return legacy;
  }
  save(orgId: string, email: string, events: NewEvent[], loaded: UserState | null): Promise<AppendResult> {
    const stream = (loaded && this.streams.get(loaded)) ?? userStream(orgId, email);
    return this.store.append(stream, events, { expectedRevision: at(loaded) });
  }
}

/** Sessions through the port. */
export class SessionRepository {
  constructor(private readonly store: EventStore) {
    store.registerProjection(consoleProjection);
  }
  async load(sessionId: string): Promise<SessionState | null> {
    return foldSession(await this.store.readStream(sessionStream(sessionId)));
  }
  save(sessionId: string, events: NewEvent[], loaded: SessionState | null): Promise<AppendResult> {
    return this.store.append(sessionStream(sessionId), events, { expectedRevision: at(loaded) });
  }
}

/** One-time sign-in links through the port: a redemption appends at the revision loaded, so it happens once. */
export class SignInLinkRepository {
  constructor(private readonly store: EventStore) {
    store.registerProjection(consoleProjection);
  }
  async load(linkId: string): Promise<SignInLinkState | null> {
    return foldSignInLink(await this.store.readStream(signInLinkStream(linkId)));
  }
  save(linkId: string, events: NewEvent[], loaded: SignInLinkState | null): Promise<AppendResult> {
    return this.store.append(signInLinkStream(linkId), events, { expectedRevision: at(loaded) });
  }
}
