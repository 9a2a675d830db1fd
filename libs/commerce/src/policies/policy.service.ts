import type { AuthorizationRequest } from '../domain/authorization-request';
import { capWindows, evaluatePolicy, Evaluation } from '../domain/evaluate';
import { PolicyReadModel, PolicyVersion } from './policy.repository';

export type { PolicyVersion } from './policy.repository';
import { NoSpendLedger, SpendLedger } from './spend-ledger';

export interface PolicySimulation extends Evaluation {
  policy_id: string;
  version: number;
  policy_hash: string;
  evaluated_at: string;
  /** 'recorded_spend': spend caps counted what the organization has spent; 'none': no spend is recorded yet. */
  spend_caps_evaluated_against: 'recorded_spend' | 'none';
}

/** Policies as they are read: the current version, any version, every version, and simulations against the current one. */
export class PolicyService {
  constructor(
    private readonly policies: PolicyReadModel,
    private readonly ledger: SpendLedger = new NoSpendLedger(),
    private readonly now: () => Date = () => new Date(),
  ) {}

  current(orgId: string, policyId: string): Promise<PolicyVersion | null> {
    return this.policies.current(orgId, policyId);
  }

  version(orgId: string, policyId: string, version: number): Promise<PolicyVersion | null> {
    return this.policies.version(orgId, policyId, version);
  }

  versions(orgId: string, policyId: string): Promise<PolicyVersion[]> {
    return this.policies.versions(orgId, policyId);
  }

  /** Evaluates a request against the current version, recording nothing; null when there is no such policy. */
  async simulate(orgId: string, policyId: string, request: AuthorizationRequest): Promise<PolicySimulation | null> {
    const current = await this.current(orgId, policyId);
    if (!current) return null;
    const now = this.now();
    const windows = capWindows(current.policy, request.currency, now);
    const spent = await this.ledger.spent(orgId, windows);
    const evaluation = evaluatePolicy(current.policy, request, { now, spent: (w) => spent.get(w.key) ?? 0 });
    return {
      policy_id: policyId,
      version: current.version,
      policy_hash: current.policy_hash,
      evaluated_at: now.toISOString(),
      ...evaluation,
      spend_caps_evaluated_against: this.ledger instanceof NoSpendLedger ? 'none' : 'recorded_spend',
    };
  }
}
