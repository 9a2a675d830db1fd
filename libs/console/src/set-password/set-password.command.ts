/**
 * A signed-in person sets (or replaces) their own password (the console's account page). From the
 * account page, `asPerson` carries the current password (required once one is set) and the session
 * that asks, which stays open while the person's other sessions end. Without it (the operator's
 * tools, tests), the password is set as given.
 */
export class SetPasswordCommand {
  constructor(
    readonly orgId: string,
    readonly userId: string,
    readonly password: string,
    readonly asPerson?: { currentPassword: string; sessionId: string },
  ) {}
}
