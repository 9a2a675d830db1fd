export { POLICY_VERSION_RECORDED } from '../domain/policy.aggregate';
export type { PolicyVersionRecorded } from '../domain/policy.aggregate';

/** One stream per organization and policy id; revision n holds version n + 1. */
export const policyStream = (orgId: string, policyId: string) => `policy-${orgId}-${policyId}`;
