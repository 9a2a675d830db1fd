/** A reviewer rejects an escalated authorization (POST /api/cdp/approvals/{authorization_id}/reject). */
export class RejectAuthorizationCommand {
  constructor(
    readonly orgId: string,
    readonly authorizationId: string,
    readonly actor: string,

    readonly note: string | null,
  ) {}
}
