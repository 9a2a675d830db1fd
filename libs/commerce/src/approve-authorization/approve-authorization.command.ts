/** A reviewer approves an escalated authorization (POST /api/cdp/approvals/{authorization_id}/approve). */
export class ApproveAuthorizationCommand {
  constructor(
    readonly orgId: string,
    readonly authorizationId: string,
    readonly actor: string,
    readonly amountCents: number | undefined,
    readonly note: string | null,
    /** The person's display name for the signed review (the console); null when a key reviews. */
    readonly reviewerName: string | null = null,
    /** The idempotent request's name (IdempotentRequest.requestId), when it came with a key: recorded with the review. */
    readonly requestId?: string,
  ) {}
}
