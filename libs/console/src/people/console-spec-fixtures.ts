import { InMemoryEventStore } from '@app/event-store';
import { ConsoleQueries, SessionRow, SignInLinkRow, UserRow } from './console-queries';
import { SessionRepository, SignInLinkRepository, UserRepository } from './console.repositories';

/** Specs: the console read model as the in-memory store's projection keeps it. */
export class InMemoryConsoleQueries extends ConsoleQueries {
  constructor(private readonly store: InMemoryEventStore) {
    super();
  }
  private users = () => this.store.rows('console_users') as unknown as UserRow[];
  private sessions = () => this.store.rows('console_sessions') as unknown as SessionRow[];
  async user(userId: string) {
    return this.users().find((u) => u.user_id === userId) ?? null;
  }
  async usersByEmail(email: string) {
    return this.users()
      .filter((u) => u.email === email)
      .slice(0, 10);
  }
  async usersOf(orgId: string) {
    return this.users().filter((u) => u.org_id === orgId);
  }
  async countUsers(orgId: string) {
    return (await this.usersOf(orgId)).length;
  }
  async session(sessionId: string) {
    return this.sessions().find((s) => s.session_id === sessionId) ?? null;
  }
  async sessionByTokenHash(tokenHash: string) {
    return this.sessions().find((s) => s.token_hash === tokenHash) ?? null;
  }
  async sessionsOf(orgId: string, userId?: string) {
    return this.sessions().filter((s) => s.org_id === orgId && (userId === undefined || s.user_id === userId));
  }
  async openSessionsOf(orgId: string, userId: string) {
    return this.sessions().filter((s) => s.org_id === orgId && s.user_id === userId && !s.revoked_at);
  }
  async linkByTokenHash(tokenHash: string) {
    return ((this.store.rows('console_sign_in_links') as unknown as SignInLinkRow[]).find((l) => l.token_hash === tokenHash) ?? null) as SignInLinkRow | null;
  }
}

/** An in-memory store with the console projection, its repositories and read model. */
export function consoleWorld(now: () => Date = () => new Date()) {
  const store = new InMemoryEventStore(now);
  return { store, users: new UserRepository(store), sessions: new SessionRepository(store), links: new SignInLinkRepository(store), reads: new InMemoryConsoleQueries(store), now };
}
