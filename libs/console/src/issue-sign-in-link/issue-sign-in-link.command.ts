import type { UserActor } from '../domain/user.aggregate';
import type { UserView } from '../people/console-queries';

/** A new one-time sign-in link for a user of the organization (POST /api/users/{id}/sign-in-links). */
export class IssueSignInLinkCommand {
  constructor(
    readonly orgId: string,
    readonly userId: string,
    readonly by: UserActor,
    readonly ttlMs?: number,
  ) {}
}

/** The link's token is shown this once (and written to the log in place of an email); only its hash is stored. */
export interface IssuedSignInLink {
  link_id: string;
  token: string;
  expires_at: string;
  user: UserView;
}

/** Where a link's token is redeemed in the console. */
export const signInUrl = (baseUrl: string, token: string) => `${baseUrl.replace(/\/$/, '')}/console/sign-in/link?token=${token}`;
