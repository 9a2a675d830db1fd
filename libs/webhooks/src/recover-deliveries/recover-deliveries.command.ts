/** Re-send every failed delivery of an endpoint created since `since` (same webhook-ids). */
export class RecoverDeliveriesCommand {
  constructor(
    readonly organizationId: string,
    readonly endpointId: string,
    readonly since: Date,
    readonly actor: string,
  ) {}
}
