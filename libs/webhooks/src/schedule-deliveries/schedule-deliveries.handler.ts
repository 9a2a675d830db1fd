import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { organizationsOf, planDeliveries } from '../domain/fan-out';
import { DeliveryRepository } from '../delivery/delivery.repository';
import { DeliveryRows, toDue } from '../delivery/delivery-rows.repository';
import { EndpointRows } from '../endpoints/endpoint-rows.repository';
import { DeliveryQueue, DueDelivery } from '../queue/delivery-queue.port';
import { ScheduleDeliveriesCommand } from './schedule-deliveries.command';

/**
 * Load the organizations' enabled endpoints (one query), plan one delivery per subscribing
 * endpoint and event, schedule them all in one appendMany per thousand, then hand the pending
 * ones to the queue. Running it again for the same events (a fan-out that crashed before its
 * checkpoint) replays the appends and only re-enqueues what is still pending.
 */
@CommandHandler(ScheduleDeliveriesCommand)
export class ScheduleDeliveriesHandler implements ICommandHandler<ScheduleDeliveriesCommand, number> {
  constructor(
    private readonly endpoints: EndpointRows,
    private readonly deliveries: DeliveryRepository,
    private readonly rows: DeliveryRows,
    private readonly queue: DeliveryQueue,
  ) {}

  async execute({ events }: ScheduleDeliveriesCommand): Promise<number> {
    const orgs = organizationsOf(events);
    if (orgs.length === 0) return 0;
    const planned = planDeliveries(events, await this.endpoints.fanOutTargets(orgs));
    if (planned.length === 0) return 0;
    const outcomes = await this.deliveries.scheduleMany(planned);
    const due: DueDelivery[] = [];
    const replayed: string[] = [];
    outcomes.forEach((o, i) => {
      if (o.status === 'appended') due.push({ id: planned[i].delivery_id, series: 1, at: new Date(o.result.events[0].recorded_at) });
      else replayed.push(planned[i].delivery_id);
    });
    if (replayed.length > 0) for (const row of (await this.rows.byIds(replayed)).values()) if (row.status === 'pending') due.push(toDue(row));
    await this.queue.enqueue(due);
    return planned.length;
  }
}
