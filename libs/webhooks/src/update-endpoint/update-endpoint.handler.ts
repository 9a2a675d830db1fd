import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ownedEndpoint, updateEndpoint } from '../domain/endpoint.aggregate';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { EndpointRows, EndpointView, endpointView } from '../endpoints/endpoint-rows.repository';
import { TargetCheck } from '../endpoints/target-check';
import { UpdateEndpointCommand } from './update-endpoint.command';
import { retryOnConflict } from '@app/event-store';

/** Load the endpoint, check a new target, record the change at the revision it was decided on. */
@CommandHandler(UpdateEndpointCommand)
export class UpdateEndpointHandler implements ICommandHandler<UpdateEndpointCommand, EndpointView> {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly rows: EndpointRows,
    private readonly targets: TargetCheck,
  ) {}

  async execute(cmd: UpdateEndpointCommand) {
    ownedEndpoint(await this.endpoints.load(cmd.endpointId), cmd.organizationId, cmd.endpointId);
    if (cmd.changes.url !== undefined) await this.targets.check(cmd.changes.url);
    await retryOnConflict(async () => {
      const state = ownedEndpoint(await this.endpoints.load(cmd.endpointId), cmd.organizationId, cmd.endpointId);
      await this.endpoints.save(state, updateEndpoint(state, cmd.changes));
    });
    return endpointView((await this.rows.byId(cmd.endpointId))!);
  }
}
