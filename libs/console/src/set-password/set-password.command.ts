/** A signed-in person sets (or replaces) their own password (the console's account page). */
export class SetPasswordCommand {
  constructor(
    readonly orgId: string,
    readonly userId: string,
    readonly password: string,
  ) {}
}
