import { randomUUID } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Clock } from '@app/core';
import { assertEnabled, ownedEndpoint } from '../domain/endpoint.aggregate';
import { deliveryIdFor } from '../domain/ids';
import { testPingBody } from '../domain/payload';
import { DeliveryRepository } from '../delivery/delivery.repository';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { DeliveryQueue } from '../queue/delivery-queue.port';
import { WEBHOOKS_CLOCK } from '../webhooks.tokens';
import { TestEndpointCommand } from './test-endpoint.command';

/** The endpoint must be enabled; the ping is a delivery like any other (same signing, retries, history). */
@CommandHandler(TestEndpointCommand)
export class TestEndpointHandler implements ICommandHandler<TestEndpointCommand, { delivery_id: string; webhook_id: string; status: 'pending' }> {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly deliveries: DeliveryRepository,
    private readonly queue: DeliveryQueue,
    @Inject(WEBHOOKS_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: TestEndpointCommand) {
    const endpoint = ownedEndpoint(await this.endpoints.load(cmd.endpointId), cmd.organizationId, cmd.endpointId);
    assertEnabled(endpoint, cmd.endpointId);
    const webhookId = randomUUID();
    const at = this.clock.now();
    const deliveryId = deliveryIdFor(webhookId, cmd.endpointId);
    const body = testPingBody(webhookId, cmd.endpointId, at, cmd.actor);
    const [outcome] = await this.deliveries.scheduleMany([
      { delivery_id: deliveryId, endpoint_id: cmd.endpointId, organization_id: cmd.organizationId, webhook_id: webhookId, event_type: body.event_type, transaction_id: null, event_recorded_at: at.toISOString(), body },
    ]);
    if (outcome.status === 'wrong_expected_version') throw outcome.error;
    await this.queue.enqueue([{ id: deliveryId, series: 1, at: new Date(outcome.result.events[0].recorded_at) }]);
    return { delivery_id: deliveryId, webhook_id: webhookId, status: 'pending' as const };
  }
}
