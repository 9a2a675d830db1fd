import type { SqlDatabase } from '@app/event-store';
import { ConsoleQueries, SessionRow, SignInLinkRow, UserRow } from './console-queries';

/** The console read model in SQL (PostgreSQL or PGlite). Sessions are read on every request: a revoked one fails at once everywhere. */
export class ConsoleReadModel extends ConsoleQueries {
  constructor(private readonly db: SqlDatabase) {
    super();
  }

  private async one<T>(sql: string, params: unknown[]): Promise<T | null> {
    const [row] = await this.db.query<T>(sql, params);
    return row ?? null;
  }

  user(userId: string) {
    return this.one<UserRow>('SELECT * FROM console_users WHERE user_id = $1', [userId]);
  }
  usersByEmail(email: string) {
    return this.db.query<UserRow>('SELECT * FROM console_users WHERE email = $1 ORDER BY created_at, user_id LIMIT 10', [email]);
  }
  usersOf(orgId: string) {
    return this.db.query<UserRow>('SELECT * FROM console_users WHERE org_id = $1 ORDER BY created_at, user_id', [orgId]);
  }
  async countUsers(orgId: string) {
    const [row] = await this.db.query<{ n: string | number }>('SELECT count(*) AS n FROM console_users WHERE org_id = $1', [orgId]);
    return Number(row.n);
  }
  session(sessionId: string) {
    return this.one<SessionRow>('SELECT * FROM console_sessions WHERE session_id = $1', [sessionId]);
  }
  sessionByTokenHash(tokenHash: string) {
    return this.one<SessionRow>('SELECT * FROM console_sessions WHERE token_hash = $1', [tokenHash]);
  }
  sessionsOf(orgId: string, userId?: string) {
    return userId
      ? this.db.query<SessionRow>('SELECT * FROM console_sessions WHERE org_id = $1 AND user_id = $2 ORDER BY created_at DESC, session_id LIMIT 200', [orgId, userId])
      : this.db.query<SessionRow>('SELECT * FROM console_sessions WHERE org_id = $1 ORDER BY created_at DESC, session_id LIMIT 200', [orgId]);
  }
  openSessionsOf(orgId: string, userId: string) {
    return this.db.query<SessionRow>('SELECT * FROM console_sessions WHERE org_id = $1 AND user_id = $2 AND revoked_at IS NULL ORDER BY created_at, session_id', [orgId, userId]);
  }
  linkByTokenHash(tokenHash: string) {
    return this.one<SignInLinkRow>('SELECT * FROM console_sign_in_links WHERE token_hash = $1', [tokenHash]);
  }
}
