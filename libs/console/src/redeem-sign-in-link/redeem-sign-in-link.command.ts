/** Sign in with a one-time link's token: the link is used up and a session starts. */
export class RedeemSignInLinkCommand {
  constructor(readonly token: string) {}
}
