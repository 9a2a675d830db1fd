/** Reject escalated authorizations whose window has closed, at most `limit` of them (the sweep runs it). */
export class ExpireAuthorizationsCommand {
  constructor(readonly limit = 100) {}
}
