import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { deleteEndpoint, ownedEndpoint } from '../domain/endpoint.aggregate';
import { EndpointRepository, retryOnConflict } from '../endpoints/endpoint.repository';
import { DeleteEndpointCommand } from './delete-endpoint.command';

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
