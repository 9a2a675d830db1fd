import type { PolicyDocument } from '../domain/policy';

/** Record a new version of a policy (PUT /api/cdp/policies/{policy_id}); `policy` is parsed already. */
export class PutPolicyCommand {
  constructor(
    readonly orgId: string,
    readonly policyId: string,
    readonly policy: PolicyDocument,
    /** `api_key:<key_id>`. */
    readonly actor: string,
  ) {}
}
