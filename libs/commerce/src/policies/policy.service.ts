import { AppError, isoOrNull } from '@app/core';
import { RecordedEvent, SqlDatabase, SqlEventStore, SqlExecutor } from '@app/event-store';
import type { AuthorizationRequest } from '../domain/authorization-request';
import { capWindows, evaluatePolicy, Evaluation } from '../domain/evaluate';
import { isPolicyId, PolicyDocument, policyHash } from '../domain/policy';
import { POLICY_VERSION_RECORDED, PolicyVersionRecorded, policyStream } from './policy.events';
import { NoSpendLedger, SpendLedger } from './spend-ledger';

/** One recorded version of a policy. */
export interface PolicyVersion {
  policy_id: string;
  version: number;
  policy: PolicyDocument;
  policy_hash: string;
  created_at: string;
}

export interface PolicySimulation extends Evaluation {
  policy_id: string;
  version: number;
  policy_hash: string;
  evaluated_at: string;
  /** 'recorded_spend': spend caps counted what the organization has spent; 'none': no spend is recorded yet. */
  spend_caps_evaluated_against: 'recorded_spend' | 'none';
}

type PolicyRow = Omit<PolicyVersion, 'created_at'> & { created_at: Date | string };

const view = (row: PolicyRow): PolicyVersion => ({
  policy_id: row.policy_id,
  version: Number(row.version),
  policy: row.policy,
  policy_hash: row.policy_hash,
  created_at: isoOrNull(row.created_at)!,
});

/** The read model, applied inside the appending transaction. */
export async function applyPolicyEvent(event: RecordedEvent, tx: SqlExecutor): Promise<void> {
  if (event.type !== POLICY_VERSION_RECORDED) return;
  const d = event.data as PolicyVersionRecorded;
  await tx.query(
    `INSERT INTO commerce_policies (organization_id, policy_id, version, policy, policy_hash, created_at)
     VALUES ($1, $2, $3, $4::json, $5, $6) ON CONFLICT DO NOTHING`,
    [d.organization_id, d.policy_id, d.version, JSON.stringify(d.policy), d.policy_hash, event.recorded_at],
  );
}

const SELECT = 'SELECT policy_id, version, policy, policy_hash, created_at FROM commerce_policies';

/**
 * Policies: each PUT of a changed document records `policy.version_recorded` on the policy's
 * stream and writes the read model in the same transaction, so every process reads the current
 * version straight from the table (one primary-key probe; nothing cached in memory).
 */
export class PolicyService {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly ledger: SpendLedger = new NoSpendLedger(),
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Records `policy` as the next version, unless it hashes the same as the current one (then
   * the current version is returned and nothing is recorded). `policy` must be parsed already.
   */
  async put(organizationId: string, policyId: string, policy: PolicyDocument, actor: string): Promise<PolicyVersion & { recorded: boolean }> {
    assertPolicyId(policyId);
    const hash = policyHash(policy);
    const stream = policyStream(organizationId, policyId);
    return this.db.transaction(async (tx) => {
      // One writer per policy at a time: versions are dense and a same-hash PUT never races a change.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [stream]);
      const current = await this.currentIn(tx, organizationId, policyId);
      if (current && current.policy_hash === hash) return { ...current, recorded: false };
      const data: PolicyVersionRecorded = {
        organization_id: organizationId,
        policy_id: policyId,
        version: (current?.version ?? 0) + 1,
        policy,
        policy_hash: hash,
      };
      const result = await this.store.appendIn(
        tx,
        stream,
        [{ type: POLICY_VERSION_RECORDED, data, metadata: { actor } }],
        current ? current.version - 1 : 'no_stream',
      );
      for (const e of result.events) await applyPolicyEvent(e, tx);
      return { policy_id: policyId, version: data.version, policy, policy_hash: hash, created_at: result.events[0].recorded_at, recorded: true };
    });
  }

  /** The current (highest) version, or null. On the authorization path: one index probe. */
  async current(organizationId: string, policyId: string): Promise<PolicyVersion | null> {
    return this.currentIn(this.db, organizationId, policyId);
  }

  private async currentIn(executor: SqlExecutor, organizationId: string, policyId: string): Promise<PolicyVersion | null> {
    const [row] = await executor.query<PolicyRow>(
      `${SELECT} WHERE organization_id = $1 AND policy_id = $2 ORDER BY version DESC LIMIT 1`,
      [organizationId, policyId],
      { name: 'commerce_policy_current' },
    );
    return row ? view(row) : null;
  }

  /** One recorded version (replay evaluates against the exact version that decided). */
  async version(organizationId: string, policyId: string, version: number): Promise<PolicyVersion | null> {
    const [row] = await this.db.query<PolicyRow>(
      `${SELECT} WHERE organization_id = $1 AND policy_id = $2 AND version = $3`,
      [organizationId, policyId, version],
      { name: 'commerce_policy_version' },
    );
    return row ? view(row) : null;
  }

  /** Every version, newest first. */
  async versions(organizationId: string, policyId: string): Promise<PolicyVersion[]> {
    const rows = await this.db.query<PolicyRow>(`${SELECT} WHERE organization_id = $1 AND policy_id = $2 ORDER BY version DESC`, [organizationId, policyId]);
    return rows.map(view);
  }

  /** Evaluates a request against the current version, recording nothing; null when there is no such policy. */
  async simulate(organizationId: string, policyId: string, request: AuthorizationRequest): Promise<PolicySimulation | null> {
    const current = await this.current(organizationId, policyId);
    if (!current) return null;
    const now = this.now();
    const windows = capWindows(current.policy, request.currency, now);
    const spent = new Map<string, number>();
    await Promise.all(windows.map(async (w) => spent.set(w.key, await this.ledger.spent(organizationId, w))));
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

function assertPolicyId(policyId: string): void {
  if (!isPolicyId(policyId)) {
    throw new AppError('validation_failed', 'Invalid policy_id', 400, [{ field: 'policy_id', message: 'must be a policy id: 1..64 of letters, digits, _ -' }]);
  }
}
