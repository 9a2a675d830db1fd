import type { PolicyDocument } from '../domain/policy';

export const POLICY_VERSION_RECORDED = 'policy.version_recorded';

/** One stream per organization and policy id; revision n holds version n + 1. */
export const policyStream = (organizationId: string, policyId: string) => `policy-${organizationId}-${policyId}`;

export interface PolicyVersionRecorded {
  organization_id: string;
  policy_id: string;
  /** 1-based. */
  version: number;
  policy: PolicyDocument;
  /** Lowercase hex SHA-256 of the policy's JCS form. */
  policy_hash: string;
}
