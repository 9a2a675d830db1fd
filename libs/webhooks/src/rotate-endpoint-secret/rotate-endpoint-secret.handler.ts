import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Clock } from '@app/core';
import { ownedEndpoint, rotateEndpointSecret } from '../domain/endpoint.aggregate';
import { newEndpointSecret } from '../domain/signing';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { EndpointSecrets, newSecretId } from '../endpoints/endpoint-secrets.repository';
import { WEBHOOKS_CLOCK } from '../webhooks.tokens';
import { RotateEndpointSecretCommand } from './rotate-endpoint-secret.command';
import { retryOnConflict } from '@app/event-store';

export interface SecretRotation {
  id: string;
  secret: string;
  previous_secret_expires_at: string;
}

/** Record the rotation at the endpoint's revision, then seal the new secret and set the old ones' expiry; the secret is answered once, here. */
@CommandHandler(RotateEndpointSecretCommand)
export class RotateEndpointSecretHandler implements ICommandHandler<RotateEndpointSecretCommand, SecretRotation> {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly secrets: EndpointSecrets,
    @Inject(WEBHOOKS_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: RotateEndpointSecretCommand): Promise<SecretRotation> {
    const secret = newEndpointSecret();
    const secretId = newSecretId();
    const now = this.clock.now();
    const until = await retryOnConflict(async () => {
      const state = ownedEndpoint(await this.endpoints.load(cmd.endpointId), cmd.organizationId, cmd.endpointId);
      const rotation = rotateEndpointSecret(state, secretId, now);
      await this.endpoints.save(state, rotation.events);
      return rotation.previousExpireAt;
    });
    await this.secrets.rotate(cmd.endpointId, secretId, secret, now, until);
    await this.endpoints.changes.announce();
    return { id: cmd.endpointId, secret, previous_secret_expires_at: until.toISOString() };
  }
}
