import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller, Scope } from '@app/access';
import { AppError } from '@app/core';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import '../http/commerce.openapi';
import { parseAuthorizationRequest } from '../domain/authorization-request';
import { policyIdField } from '../domain/fields';
import { PolicyService, PolicyVersion } from './policy.service';

export const policyParams = z.object({ policy_id: policyIdField() });
const versionParams = z.object({
  policy_id: policyIdField(),
  version: z.string().regex(/^[1-9][0-9]{0,8}$/, { error: 'must be a version number (1, 2, …)' }),
});

const READ_SCOPES: Scope[] = ['payments:read', 'payments:write'];

/** Reads need either payments scope; @Authenticated lists scopes that are all required. */
function requireAnyScope(caller: AccessContext, scopes: Scope[]): string {
  const principal = caller.principal!;
  if (!scopes.some((s) => principal.scopes.includes(s))) {
    throw new AppError('insufficient_scope', `This key needs one of the scopes ${scopes.join(', ')}`, 403, { missing_scopes: scopes, any_of: true });
  }
  return principal.orgId;
}

const notFound = (policyId: string, version?: number) =>
  new AppError('not_found', version === undefined ? `policy ${policyId} not found` : `version ${version} of policy ${policyId} not found`, 404);

export const show = ({ policy_id, version, policy_hash, policy, created_at }: PolicyVersion) => ({ policy_id, version, policy_hash, policy, created_at });

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp/policies')
export class PoliciesController {
  constructor(@Inject(PolicyService) private readonly policies: PolicyService) {}

  @Get(':policy_id')
  @Authenticated()
  @ApiOperation({ operationId: 'getPolicy', summary: "A policy's current version" })
  @ApiPathParams(policyParams)
  @ApiJsonResponse(200, 'PolicyVersion')
  async current(@Caller() caller: AccessContext, @Param(new ZodPipe(policyParams, 'params')) p: z.infer<typeof policyParams>) {
    const v = await this.policies.current(requireAnyScope(caller, READ_SCOPES), p.policy_id);
    if (!v) throw notFound(p.policy_id);
    return show(v);
  }

  @Get(':policy_id/versions')
  @Authenticated()
  @ApiOperation({ operationId: 'listPolicyVersions', summary: "A policy's versions, newest first" })
  @ApiPathParams(policyParams)
  @ApiJsonResponse(200, 'PolicyVersionList')
  async versions(@Caller() caller: AccessContext, @Param(new ZodPipe(policyParams, 'params')) p: z.infer<typeof policyParams>) {
    const versions = await this.policies.versions(requireAnyScope(caller, READ_SCOPES), p.policy_id);
    if (versions.length === 0) throw notFound(p.policy_id);
    return { policy_id: p.policy_id, versions: versions.map(show) };
  }

  @Get(':policy_id/versions/:version')
  @Authenticated()
  @ApiOperation({ operationId: 'getPolicyVersion', summary: 'One version of a policy' })
  @ApiPathParams(versionParams)
  @ApiJsonResponse(200, 'PolicyVersion')
  async version(@Caller() caller: AccessContext, @Param(new ZodPipe(versionParams, 'params')) p: z.infer<typeof versionParams>) {
    const n = Number(p.version);
    const v = await this.policies.version(requireAnyScope(caller, READ_SCOPES), p.policy_id, n);
    if (!v) throw notFound(p.policy_id, n);
    return show(v);
  }

  @Post(':policy_id/simulate')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({ operationId: 'simulatePolicy', summary: "Evaluate a payment_authorization.v1 request against the policy's current version; records nothing" })
  @ApiPathParams(policyParams)
  @ApiJsonBody('AuthorizationRequest')
  @ApiJsonResponse(200, 'PolicySimulation')
  async simulate(@Caller() caller: AccessContext, @Param(new ZodPipe(policyParams, 'params')) p: z.infer<typeof policyParams>, @Body() body: unknown) {
    const orgId = requireAnyScope(caller, READ_SCOPES);
    const request = parseAuthorizationRequest(body ?? undefined);
    if (request.policy_id !== undefined && request.policy_id !== p.policy_id) {
      throw new AppError('validation_failed', 'Invalid authorization request: policy_id', 400, [
        { field: 'policy_id', message: `must be ${p.policy_id}, the policy being simulated, or be left out` },
      ]);
    }
    const result = await this.policies.simulate(orgId, p.policy_id, request);
    if (!result) throw notFound(p.policy_id);
    return result;
  }
}
