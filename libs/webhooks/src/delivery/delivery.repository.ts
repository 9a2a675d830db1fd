import { Batcher } from '@app/core';
import type { EventStore, NewEvent, StreamAppendOutcome } from '@app/event-store';
import type { Logger } from '@app/http';
import { DeliveryEvent, DeliveryState, scheduleDelivery } from '../domain/delivery.aggregate';
import type { DeliveryScheduled } from '../domain/delivery.events';
import { deliveryStream } from '../domain/event-types';
import { deliveriesProjection } from './delivery.projection';

const SCHEDULE_CHUNK = 1000;

/**
 * Writes of delivery streams through the EventStore port; the deliveries projection writes the
 * read model, the attempt history and the endpoints' failure streaks with each append.
 *
 * Throughput: a fan-out schedules its batch in one `appendMany` per thousand deliveries, and
 * successful attempts made at the same moment are recorded together (`saveDelivered`, one
 * `appendMany`, each at the revision its delivery had when loaded). Most attempts succeed, so
 * that is the path that must be cheap.
 */
export class DeliveryRepository {
  private readonly delivered: Batcher<{ state: DeliveryState; event: DeliveryEvent }, boolean>;

  constructor(
    private readonly store: EventStore,
    private readonly logger?: Logger,
    options: { maxBatch?: number; maxInFlight?: number } = {},
  ) {
    store.registerProjection(deliveriesProjection);
    this.delivered = new Batcher((items) => this.writeDelivered(items), { maxBatch: options.maxBatch ?? 200, maxInFlight: options.maxInFlight ?? 2 });
  }

  /**
   * Schedules deliveries (each its own stream's first event, whose id derives from the delivery
   * id): scheduling one again replays and writes nothing. Outcomes in the order given.
   */
  async scheduleMany(items: DeliveryScheduled[]): Promise<StreamAppendOutcome[]> {
    const outcomes: StreamAppendOutcome[] = [];
    for (let i = 0; i < items.length; i += SCHEDULE_CHUNK) {
      const chunk = items.slice(i, i + SCHEDULE_CHUNK);
      outcomes.push(...(await this.store.appendMany(chunk.map((d) => ({ stream: deliveryStream(d.delivery_id), events: [scheduleDelivery(d) as NewEvent], expected: 'any' as const })))));
    }
    return outcomes;
  }

  /** Events a decision made at the state's revision (a race loses with WrongExpectedVersion). */
  save(state: Pick<DeliveryState, 'id' | 'revision'>, events: DeliveryEvent[]) {
    return this.store.append(deliveryStream(state.id), events as NewEvent[], { expectedRevision: state.revision });
  }

  /**
   * A successful attempt on the delivery as loaded, recorded with others of the same moment.
   * True once recorded; false when the delivery changed since it was loaded (a duplicate attempt
   * won) or the batch failed: the caller records it the careful way instead.
   */
  saveDelivered(state: DeliveryState, event: DeliveryEvent): Promise<boolean> {
    return this.delivered.add({ state, event }).catch((err) => {
      this.logger?.warn({ err: (err as Error).message, delivery_id: state.id }, 'webhook attempt batch failed; recording it alone');
      return false;
    });
  }

  private async writeDelivered(items: { state: DeliveryState; event: DeliveryEvent }[]): Promise<boolean[]> {
    // A stream once per append (a duplicate attempt of the same moment goes the careful way), in
    // one order across concurrent batches.
    const seen = new Set<string>();
    const picked = items
      .map((item, i) => ({ item, i }))
      .filter(({ item }) => !seen.has(item.state.id) && seen.add(item.state.id))
      .sort((a, b) => (a.item.state.id < b.item.state.id ? -1 : a.item.state.id > b.item.state.id ? 1 : 0));
    const outcomes = await this.store.appendMany(
      picked.map(({ item: { state, event } }) => ({ stream: deliveryStream(state.id), events: [event as NewEvent], expected: state.revision })),
    );
    const recorded = new Array<boolean>(items.length).fill(false);
    picked.forEach(({ i }, k) => (recorded[i] = outcomes[k].status === 'appended'));
    return recorded;
  }
}
