import type { UserActor } from '../domain/user.aggregate';

/** Remove a person from the organization (POST /api/users/{id}/deactivate, the people page): no more sign-ins, their sessions end. */
export class DeactivateUserCommand {
  constructor(
    readonly orgId: string,
    readonly userId: string,
    readonly by: UserActor,
  ) {}
}
