import type { LinkDelivery } from '../domain/session.aggregate';
import type { UserActor } from '../domain/user.aggregate';
import type { UserView } from '../people/console-queries';

/** A new one-time sign-in link for a user of the organization (POST /api/users/{id}/sign-in-links). */
export class IssueSignInLinkCommand {
  constructor(
    readonly orgId: string,
    readonly userId: string,
    readonly by: UserActor,
    readonly ttlMs?: number,
    /** The first link of an account the issuer has just invited: it goes to the issuer. */
    readonly newAccount = false,
  ) {}
}

/**
 * The link's token, for whoever delivers it: to the issuer once (delivered_to `issuer`), or to the
 * person (`user`: the server's log in place of an email), never both. Only its hash is stored.
 */
export interface IssuedSignInLink {
  link_id: string;
  token: string;
  delivered_to: LinkDelivery;
  expires_at: string;
  user: UserView;
}

/** Where a link's token is redeemed in the console. */
export const signInUrl = (baseUrl: string, token: string) => `${baseUrl.replace(/\/$/, '')}/console/sign-in/link?token=${token}`;
