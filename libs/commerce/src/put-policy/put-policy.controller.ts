import { Body, Controller, HttpCode, Param, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { parsePolicy } from '../domain/policy';
import { policyParams, show } from '../policies/policies.controller';
import type { PolicyVersion } from '../policies/policy.repository';
import { PutPolicyCommand } from './put-policy.command';

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp/policies')
export class PutPolicyController {
  constructor(private readonly commands: CommandBus) {}

  @Put(':policy_id')
  @HttpCode(200)
  @Authenticated('payments:write')
  @ApiOperation({ operationId: 'putPolicy', summary: 'Record a new version of a policy (nothing is recorded when the document hashes as the current version)' })
  @ApiPathParams(policyParams)
  @ApiJsonBody('PolicyDocument')
  @ApiJsonResponse(200, 'PolicyVersionRecorded')
  async put(@Caller() caller: AccessContext, @Param(new ZodPipe(policyParams, 'params')) p: z.infer<typeof policyParams>, @Body() body: unknown) {
    const policy = parsePolicy(body ?? undefined);
    const v = await this.commands.execute<PutPolicyCommand, PolicyVersion & { recorded: boolean }>(
      new PutPolicyCommand(caller.principal!.orgId, p.policy_id, policy, `api_key:${caller.principal!.keyId}`),
    );
    return { ...show(v), recorded: v.recorded };
  }
}
