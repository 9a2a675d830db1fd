import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Clock } from '@app/core';
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
    const id = newEndpointId();
    const secretId = newSecretId();
    const secret = newEndpointSecret();
    const events = createEndpoint({ id, orgId: cmd.organizationId, ...cmd.input, secretId });
    await this.secrets.add(id, secretId, secret, this.clock.now());
    try {
      await this.endpoints.saveNew(id, events);
    } catch (err) {
      await this.secrets.discard(id, secretId).catch(() => undefined);
      throw err;
    }
    return { ...endpointView((await this.rows.byId(id))!), secret };
  }
}
