import type { UserActor } from '../domain/user.aggregate';

/** Invite a person into an organization: the user, and a one-time sign-in link for them (POST /api/users, the console, the CLI). */
export class InviteUserCommand {
  constructor(
    readonly orgId: string,
    readonly input: { email: string; displayName: string; role: string },
    readonly by: UserActor,
    /** How long the link works (the first owner's, printed at the first start, longer). */
    readonly linkTtlMs?: number,
  ) {}
}
