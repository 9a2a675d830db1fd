import type { RecordedEvent } from '@app/event-store';

/** Fan out commerce lifecycle events (in `$all` order) to the endpoints that subscribe to them. */
export class ScheduleDeliveriesCommand {
  constructor(readonly events: RecordedEvent[]) {}
}
