import type { Scope } from '@app/access';
import type { Clock } from '@app/core';
import { scopesOf } from '../domain/roles';
import { csrfTokenFor, hashToken, SESSION_TOKEN_RE } from '../domain/secrets';
import { ConsoleQueries, SessionRow, UserRow } from './console-queries';

/** A signed-in person, as each request sees them: their role (read now, so a change applies at once) and its scopes. */
export interface ConsoleViewer {
  user: UserRow;
  session: SessionRow;
  scopes: readonly Scope[];
  /** The synchronizer token every state-changing form of this session carries. */
  csrf: string;
}

/** Resolves a session cookie to its person: null when it is malformed, unknown, expired or revoked. Nothing is cached. */
export class ConsoleAuth {
  constructor(
    private readonly reads: ConsoleQueries,
    private readonly clock: Clock,
    /** The configured BASE_URL: an https one makes the console's cookies `__Host-` ones. */
    readonly baseUrl = '',
  ) {}

  async viewer(sessionToken: string | undefined): Promise<ConsoleViewer | null> {
    if (!sessionToken || !SESSION_TOKEN_RE.test(sessionToken)) return null;
    const session = await this.reads.sessionByTokenHash(hashToken(sessionToken));
    if (!session || session.revoked_at || new Date(session.expires_at).getTime() <= this.clock.now().getTime()) return null;
    const user = await this.reads.user(session.user_id);
    if (!user || user.org_id !== session.org_id || user.deactivated_at) return null;
    return { user, session, scopes: scopesOf(user.role), csrf: csrfTokenFor(sessionToken) };
  }
}
