/** One attempt of one delivery of the series a queue job was made for (what every queue runs). */
export class DeliverWebhookCommand {
  constructor(
    readonly deliveryId: string,
    readonly series: number,
  ) {}
}
