import type { UserActor } from '../domain/user.aggregate';

/** Change a person's role (PATCH /api/users/{id}). */
export class ChangeUserRoleCommand {
  constructor(
    readonly orgId: string,
    readonly userId: string,
    readonly role: string,
    readonly by: UserActor,
  ) {}
}
