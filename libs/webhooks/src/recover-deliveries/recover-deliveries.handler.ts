import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError } from '@app/core';
import { assertEnabled, ownedEndpoint } from '../domain/endpoint.aggregate';
import { DeliveryRows } from '../delivery/delivery-rows.repository';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { DeliveryQueue, DueDelivery } from '../queue/delivery-queue.port';
import { RedeliverDeliveryCommand } from '../redeliver-delivery/redeliver-delivery.command';
import { RedeliverDeliveryHandler } from '../redeliver-delivery/redeliver-delivery.handler';
import { RecoverDeliveriesCommand } from './recover-deliveries.command';

/** Each failed delivery gets a new series (as a redelivery would), enqueued two hundred at a time. */
@CommandHandler(RecoverDeliveriesCommand)
export class RecoverDeliveriesHandler implements ICommandHandler<RecoverDeliveriesCommand, { endpoint_id: string; since: string; recovered: number }> {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly rows: DeliveryRows,
    private readonly redeliver: RedeliverDeliveryHandler,
    private readonly queue: DeliveryQueue,
  ) {}

  async execute(cmd: RecoverDeliveriesCommand) {
    assertEnabled(ownedEndpoint(await this.endpoints.load(cmd.endpointId), cmd.organizationId, cmd.endpointId), cmd.endpointId);
    const ids = await this.rows.failedSince(cmd.endpointId, cmd.since);
    let recovered = 0;
    for (let i = 0; i < ids.length; i += 200) {
      const due: DueDelivery[] = [];
      for (const id of ids.slice(i, i + 200)) {
        const started = await this.redeliver.startSeries(new RedeliverDeliveryCommand(cmd.organizationId, id, cmd.actor, true)).catch((err) => {
          if (err instanceof DomainError && err.code === 'webhook_delivery_pending') return null; // raced with another redelivery
          throw err;
        });
        if (started) due.push(started.due);
      }
      await this.queue.enqueue(due);
      recovered += due.length;
    }
    return { endpoint_id: cmd.endpointId, since: cmd.since.toISOString(), recovered };
  }
}
