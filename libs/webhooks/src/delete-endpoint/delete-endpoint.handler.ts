import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { deleteEndpoint, ownedEndpoint } from '../domain/endpoint.aggregate';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { DeleteEndpointCommand } from './delete-endpoint.command';
import { retryOnConflict } from '@app/event-store';

@CommandHandler(DeleteEndpointCommand)
export class DeleteEndpointHandler implements ICommandHandler<DeleteEndpointCommand, void> {
  constructor(private readonly endpoints: EndpointRepository) {}

  async execute(cmd: DeleteEndpointCommand): Promise<void> {
    await retryOnConflict(async () => {
      const state = ownedEndpoint(await this.endpoints.load(cmd.endpointId), cmd.organizationId, cmd.endpointId);
      await this.endpoints.save(state, deleteEndpoint(state));
    });
  }
}
