import type { PolicyDocument } from './policy';

/**
 * The Policy aggregate: one stream per organization and policy id; revision n holds version n + 1.
 * A PUT records a new version unless the document hashes as the current one.
 */
export const POLICY_VERSION_RECORDED = 'policy.version_recorded';

export interface PolicyVersionRecorded {
  organization_id: string;
  policy_id: string;
  /** 1-based. */
  version: number;
  policy: PolicyDocument;
  /** Lowercase hex SHA-256 of the policy's JCS form. */
  policy_hash: string;
}

export interface PolicyState {
  version: number;
  policy_hash: string;
}

/** The expected revision of the policy's stream at this state. */
export const policyRevision = (s: PolicyState | null): number | 'no_stream' => (s ? s.version - 1 : 'no_stream');

export function recordPolicyVersion(
  current: PolicyState | null,
  cmd: { orgId: string; policyId: string; policy: PolicyDocument; policyHash: string; actor: string },
): { type: string; data: PolicyVersionRecorded; metadata: { actor: string } }[] {
  if (current && current.policy_hash === cmd.policyHash) return [];
  const data: PolicyVersionRecorded = {
    organization_id: cmd.orgId,
    policy_id: cmd.policyId,
    version: (current?.version ?? 0) + 1,
    policy: cmd.policy,
    policy_hash: cmd.policyHash,
  };
  return [{ type: POLICY_VERSION_RECORDED, data, metadata: { actor: cmd.actor } }];
}
