import type { AppendResult, EventStore, NewEvent } from '@app/event-store';
import { foldSession, foldSignInLink, SessionState, SignInLinkState } from '../domain/session.aggregate';
import { foldUser, UserState } from '../domain/user.aggregate';
import { consoleProjection, sessionStream, signInLinkStream, userStream } from './console.events';

const at = (state: { revision: number } | null) => (state ? state.revision : 'no_stream');

/** Users through the EventStore port: one stream per email address, saved at the revision loaded (a new one at no_stream). */
export class UserRepository {
  constructor(private readonly store: EventStore) {
    store.registerProjection(consoleProjection);
  }
  async load(email: string): Promise<UserState | null> {
    return foldUser(await this.store.readStream(userStream(email)));
  }
  save(email: string, events: NewEvent[], loaded: UserState | null): Promise<AppendResult> {
    return this.store.append(userStream(email), events, { expectedRevision: at(loaded) });
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
