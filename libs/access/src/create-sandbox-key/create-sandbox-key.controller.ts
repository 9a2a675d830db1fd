import { Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiJsonResponse } from '@app/http';
import { Throttle } from '../http/access-context';
import type { CreatedApiKey } from '../create-api-key/create-api-key.command';
import { CreateSandboxKeyCommand } from './create-sandbox-key.command';
import '../http/access.openapi';

@ApiTags('access')
@Controller()
export class CreateSandboxKeyController {
  constructor(private readonly commands: CommandBus) {}

  /** An ephemeral cdp_test_ key with every scope, for a fresh sandbox organization. */
  @Post('api/sandbox/keys')
  @HttpCode(201)
  @Throttle('sandbox_key_daily')
  @ApiOperation({ operationId: 'createSandboxKey', summary: 'Mint an ephemeral sandbox key (anonymous; 3 per 24 h per IP, 60 per minute globally)' })
  @ApiJsonResponse(201, 'SandboxKey')
  async mint() {
    const key = await this.commands.execute<CreateSandboxKeyCommand, CreatedApiKey>(new CreateSandboxKeyCommand());
    return { ...key, sandbox: true };
  }
}
