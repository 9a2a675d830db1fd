import type { InlineProjection, Json, RowChange } from '@app/event-store';
import { POLICY_VERSION_RECORDED, PolicyVersionRecorded } from '../domain/policy.aggregate';

/** Every recorded version of every policy, written with its event (the current one is the highest). */
export const policiesProjection: InlineProjection = {
  name: 'commerce_policies',
  filter: { eventTypes: [POLICY_VERSION_RECORDED], streamPrefix: 'policy-' },
  tables: ['commerce_policies'],
  apply(e): RowChange[] {
    const d = e.data as PolicyVersionRecorded;
    const row = { organization_id: d.organization_id, policy_id: d.policy_id, version: d.version, policy: d.policy as unknown as Json, policy_hash: d.policy_hash, created_at: e.recorded_at };
    return [{ op: 'insert', table: 'commerce_policies', key: ['organization_id', 'policy_id', 'version'], row }];
  },
};
