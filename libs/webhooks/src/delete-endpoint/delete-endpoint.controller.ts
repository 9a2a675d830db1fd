import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiPathParams, ZodPipe } from '@app/http';
import { EndpointParams, endpointParams } from '../http/webhooks-http';
import { DeleteEndpointCommand } from './delete-endpoint.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class DeleteEndpointController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('endpoints/:id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWebhookEndpoint', summary: 'Delete an endpoint; its pending deliveries are abandoned' })
  @ApiPathParams(endpointParams)
  @ApiResponse({ status: 204, description: 'Deleted' })
  async remove(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: EndpointParams): Promise<void> {
    await this.commands.execute(new DeleteEndpointCommand(c.principal!.orgId, p.id));
  }
}
