import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ownedDelivery, requestRedelivery } from '../domain/delivery.aggregate';
import { endpointDisabledError } from '../domain/endpoint.aggregate';
import { DeliveryRepository } from '../delivery/delivery.repository';
import { deliveryFromRow, DeliveryRows } from '../delivery/delivery-rows.repository';
import { EndpointRows } from '../endpoints/endpoint-rows.repository';
import { DeliveryQueue, DueDelivery } from '../queue/delivery-queue.port';
import { RedeliverDeliveryCommand } from './redeliver-delivery.command';
import { retryOnConflict } from '@app/event-store';

export interface Redelivery {
  id: string;
  webhook_id: string;
  status: 'pending';
  series: number;
}

/** Starts the new series (decided on the delivery as loaded, saved at its revision) and hands it to the queue. */
@CommandHandler(RedeliverDeliveryCommand)
export class RedeliverDeliveryHandler implements ICommandHandler<RedeliverDeliveryCommand, Redelivery> {
  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly rows: DeliveryRows,
    private readonly endpoints: EndpointRows,
    private readonly queue: DeliveryQueue,
  ) {}

  async execute(cmd: RedeliverDeliveryCommand): Promise<Redelivery> {
    const started = await this.startSeries(cmd);
    await this.queue.enqueue([started.due]);
    return { id: cmd.deliveryId, webhook_id: started.webhook_id, status: 'pending', series: started.due.series };
  }

  /** The new series, not yet enqueued (a recovery enqueues its deliveries together). */
  startSeries(cmd: RedeliverDeliveryCommand): Promise<{ webhook_id: string; due: DueDelivery }> {
    return retryOnConflict(async () => {
      const row = await this.rows.byId(cmd.deliveryId);
      const state = ownedDelivery(row ? deliveryFromRow(row) : null, cmd.organizationId, cmd.deliveryId);
      const events = requestRedelivery(state, cmd.actor, { onlyFailed: cmd.onlyFailed });
      const endpoint = await this.endpoints.byId(state.endpoint_id);
      if (!endpoint || endpoint.deleted_at || !endpoint.enabled) throw endpointDisabledError(state.endpoint_id);
      const saved = await this.deliveries.save(state, events);
      return { webhook_id: state.event_id, due: { id: state.id, series: state.series + 1, at: new Date(saved.events[0].recorded_at) } };
    });
  }
}
