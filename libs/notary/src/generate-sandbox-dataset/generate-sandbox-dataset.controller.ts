import { randomInt } from 'node:crypto';
import { Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Throttle } from '@app/access';
import { ApiJsonResponse } from '@app/http';
import { GenerateSandboxDatasetCommand } from './generate-sandbox-dataset.command';
import type { SandboxDataset } from './generate-sandbox-dataset.handler';

@ApiTags('certificates')
@Controller('api/sandbox')
export class GenerateSandboxDatasetController {
  constructor(private readonly commands: CommandBus) {}

  @Post('datasets')
  @HttpCode(201)
  @Throttle('sandbox_dataset_daily')
  @ApiOperation({ operationId: 'generateSandboxDataset', summary: 'Anonymous sandbox: a small synthetic dataset (CSV) certified on a fresh sandbox organization, to try issuance and verification without an account' })
  @ApiJsonResponse(201, 'SandboxDataset')
  generate(): Promise<SandboxDataset> {
    return this.commands.execute(new GenerateSandboxDatasetCommand(randomInt(0, 2 ** 32)));
  }
}
