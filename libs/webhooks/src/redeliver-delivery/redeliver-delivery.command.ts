/** A new series of attempts for a finished delivery, with the same webhook-id and body (POST …/deliveries/{id}/redeliver). */
export class RedeliverDeliveryCommand {
  constructor(
    readonly organizationId: string,
    readonly deliveryId: string,
    readonly actor: string,
    /** A recovery re-sends only failed deliveries. */
    readonly onlyFailed = false,
  ) {}
}
