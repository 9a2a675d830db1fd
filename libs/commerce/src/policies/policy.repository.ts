import { BatchLoader, isoOrNull } from '@app/core';
import type { EventStore, SqlDatabase } from '@app/event-store';
import type { PolicyDocument } from '../domain/policy';
import { policyRevision, PolicyState, PolicyVersionRecorded, recordPolicyVersion } from '../domain/policy.aggregate';
import { policyStream } from './policy.events';

/** One recorded version of a policy. */
export interface PolicyVersion {
  policy_id: string;
  version: number;
  policy: PolicyDocument;
  policy_hash: string;
  created_at: string;
}

type PolicyRow = Omit<PolicyVersion, 'created_at'> & { created_at: Date | string; organization_id?: string };

const view = (row: PolicyRow): PolicyVersion => ({
  policy_id: row.policy_id,
  version: Number(row.version),
  policy: row.policy,
  policy_hash: row.policy_hash,
  created_at: isoOrNull(row.created_at)!,
});

const SELECT = 'SELECT policy_id, version, policy, policy_hash, created_at FROM commerce_policies';

/**
 * Policies through the EventStore port: the latest version comes from the policy's own stream
 * (the source of truth a decision is made on), and versions are appended at its revision (the
 * policies projection writes the read model with each).
 */
export class PolicyRepository {
  constructor(private readonly store: EventStore) {}

  async latest(orgId: string, policyId: string): Promise<PolicyVersion | null> {
    const [last] = await this.store.readStream(policyStream(orgId, policyId), { direction: 'backwards', limit: 1 });
    if (!last) return null;
    const d = last.data as PolicyVersionRecorded;
    return { policy_id: d.policy_id, version: d.version, policy: d.policy, policy_hash: d.policy_hash, created_at: last.recorded_at };
  }

  /** Appends the decided events at the state's revision; a concurrent version makes it WrongExpectedVersion. */
  save(orgId: string, policyId: string, state: PolicyState | null, events: ReturnType<typeof recordPolicyVersion>) {
    return this.store.append(policyStream(orgId, policyId), events, { expectedRevision: policyRevision(state) });
  }
}

/** Reads of the policies read model (written only by the policies projection), never from a cache: a new version holds at once on every process. */
export class PolicyReadModel {
  constructor(private readonly db: SqlDatabase) {}

  /** The current version; lookups of the same moment share one query (the authorization path). */
  current(orgId: string, policyId: string): Promise<PolicyVersion | null> {
    return this.currentVersions.load(`${orgId}\u0000${policyId}`).then((v) => v ?? null);
  }

  private readonly currentVersions = new BatchLoader<PolicyVersion>(async (keys) => {
    const pairs = keys.map((k) => k.split('\u0000'));
    const rows = await this.db.query<PolicyRow & { organization_id: string }>(
      `SELECT DISTINCT ON (p.organization_id, p.policy_id) p.organization_id, p.policy_id, p.version, p.policy, p.policy_hash, p.created_at
       FROM unnest($1::text[], $2::text[]) AS w(org, id)
       JOIN commerce_policies p ON p.organization_id = w.org AND p.policy_id = w.id
       ORDER BY p.organization_id, p.policy_id, p.version DESC`,
      [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
      { name: 'commerce_policy_current_many' },
    );
    return new Map(rows.map((r) => [`${r.organization_id}\u0000${r.policy_id}`, view(r)]));
  });

  async version(orgId: string, policyId: string, version: number): Promise<PolicyVersion | null> {
    const [row] = await this.db.query<PolicyRow>(`${SELECT} WHERE organization_id = $1 AND policy_id = $2 AND version = $3`, [orgId, policyId, version], {
      name: 'commerce_policy_version',
    });
    return row ? view(row) : null;
  }

  async versions(orgId: string, policyId: string): Promise<PolicyVersion[]> {
    const rows = await this.db.query<PolicyRow>(`${SELECT} WHERE organization_id = $1 AND policy_id = $2 ORDER BY version DESC`, [orgId, policyId]);
    return rows.map(view);
  }
}
