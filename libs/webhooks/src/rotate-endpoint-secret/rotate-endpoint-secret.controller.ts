import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { EndpointParams, endpointParams } from '../http/webhooks-http';
import { RotateEndpointSecretCommand } from './rotate-endpoint-secret.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class RotateEndpointSecretController {
  constructor(private readonly commands: CommandBus) {}

  @Post('endpoints/:id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateWebhookSecret', summary: 'New signing secret; the previous one keeps signing beside it for 24 h' })
  @ApiPathParams(endpointParams)
  @ApiJsonResponse(200, 'WebhookSecretRotation')
  rotate(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: EndpointParams) {
    return this.commands.execute(new RotateEndpointSecretCommand(c.principal!.orgId, p.id));
  }
}
