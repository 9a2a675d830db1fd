import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Clock } from '@app/core';
import { WrongExpectedVersion } from '@app/event-store';
import { createEndpoint } from '../domain/endpoint.aggregate';
import { newEndpointId } from '../domain/ids';
import { newEndpointSecret } from '../domain/signing';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { EndpointRows, EndpointView, endpointView } from '../endpoints/endpoint-rows.repository';
import { EndpointSecrets, newSecretId } from '../endpoints/endpoint-secrets.repository';
import { TargetCheck } from '../endpoints/target-check';
import { WEBHOOKS_CLOCK } from '../webhooks.tokens';
import { CreateEndpointCommand } from './create-endpoint.command';

/**
 * Check the target, seal a new secret, append the creation (the organization's limit is the
 * endpoint count's constraint, so it holds under concurrency), answer the endpoint with its secret.
 *
 * A request with an Idempotency-Key names the endpoint from the request (requestId): a retry that
 * takes over the key of a process that died after creating it, before storing the answer, finds
 * that endpoint and answers it with its secret, rather than creating a second one.
 */
@CommandHandler(CreateEndpointCommand)
export class CreateEndpointHandler implements ICommandHandler<CreateEndpointCommand, EndpointView & { secret: string }> {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly rows: EndpointRows,
    private readonly secrets: EndpointSecrets,
    private readonly targets: TargetCheck,
    @Inject(WEBHOOKS_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: CreateEndpointCommand) {
    await this.targets.check(cmd.input.url);
    const id = newEndpointId(cmd.requestId);
    const earlier = cmd.requestId ? await this.createdBefore(id) : null;
    if (earlier) return earlier;
    const secretId = newSecretId();
    const secret = newEndpointSecret();
    const events = createEndpoint({ id, orgId: cmd.organizationId, ...cmd.input, secretId });
    await this.secrets.add(id, secretId, secret, this.clock.now());
    try {
      await this.endpoints.saveNew(id, events);
    } catch (err) {
      await this.secrets.discard(id, secretId).catch(() => undefined);
      const raced = cmd.requestId && err instanceof WrongExpectedVersion ? await this.createdBefore(id) : null;
      if (raced) return raced;
      throw err;
    }
    return { ...endpointView((await this.rows.byId(id))!), secret };
  }

  /** The endpoint an earlier run of this request created, with its secret: its only one, as no one else knew its id to rotate it. */
  private async createdBefore(id: string) {
    const row = await this.rows.byId(id);
    if (!row) return null;
    const [first] = await this.secrets.live(id, this.clock.now());
    return first ? { ...endpointView(row), secret: first.secret } : null;
  }
}
