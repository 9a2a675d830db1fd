import { DomainError } from '@app/core';
import { InMemoryEventStore, NewEvent } from '@app/event-store';
import { parsePolicy } from '../domain/policy';
import { POLICY_VERSION_RECORDED, PolicyVersionRecorded } from '../domain/policy.aggregate';
import { policyStream } from '../policies/policy.events';
import { PolicyRepository } from '../policies/policy.repository';
import { PutPolicyCommand } from './put-policy.command';
import { PutPolicyHandler } from './put-policy.handler';

const doc = (perTransaction: number) => parsePolicy({ limits: { USD: { per_transaction_cents: perTransaction } } });
const put = (policyId: string, perTransaction: number, orgId = 'org_a') => new PutPolicyCommand(orgId, policyId, doc(perTransaction), 'api_key:key_1');

describe('PUT a policy (handler on the in-memory store)', () => {
  let store: InMemoryEventStore;
  let sut: PutPolicyHandler;
  beforeEach(() => {
    store = new InMemoryEventStore();
    sut = new PutPolicyHandler(new PolicyRepository(store));
  });

  it('records version 1, then a changed document as version 2, each as one event on the policy stream with the actor', async () => {
    const v1 = await sut.execute(put('default', 5000));
    expect(v1).toMatchObject({ policy_id: 'default', version: 1, recorded: true, policy: doc(5000) });
    expect(v1.policy_hash).toMatch(/^[0-9a-f]{64}$/);
    const v2 = await sut.execute(put('default', 6000));
    expect(v2).toMatchObject({ version: 2, recorded: true });
    expect(v2.policy_hash).not.toBe(v1.policy_hash);
    const events = await store.readStream(policyStream('org_a', 'default'));
    expect(events.map((e) => [e.type, (e.data as PolicyVersionRecorded).version, e.metadata.actor])).toEqual([
      [POLICY_VERSION_RECORDED, 1, 'api_key:key_1'],
      [POLICY_VERSION_RECORDED, 2, 'api_key:key_1'],
    ]);
  });

  it('records nothing when the document hashes as the current version', async () => {
    const v1 = await sut.execute(put('default', 5000));
    const again = await sut.execute(put('default', 5000));
    expect(again).toEqual({ ...v1, recorded: false });
    expect(await store.readStream(policyStream('org_a', 'default'))).toHaveLength(1);
  });

  it("keeps organizations apart: another organization's policy of the same id starts at version 1", async () => {
    await sut.execute(put('default', 5000, 'org_a'));
    expect(await sut.execute(put('default', 5000, 'org_b'))).toMatchObject({ version: 1, recorded: true });
  });

  it('refuses a malformed policy id with validation_failed and records nothing', async () => {
    await expect(sut.execute(put('../etc', 5000))).rejects.toEqual(expect.objectContaining({ code: 'validation_failed' }));
    await expect(sut.execute(put('x'.repeat(65), 5000))).rejects.toBeInstanceOf(DomainError);
    expect((await store.readAll()).events).toHaveLength(0);
  });

  it('a PUT that loses a race decides again on the version that won, and becomes the next version', async () => {
    // Another writer records version 1 between this handler's load and its append.
    const racing = new (class extends InMemoryEventStore {
      private raced = false;
      override async append(stream: string, events: NewEvent[], options?: Parameters<InMemoryEventStore['append']>[2]) {
        if (!this.raced) {
          this.raced = true;
          const other: PolicyVersionRecorded = { organization_id: 'org_a', policy_id: 'default', version: 1, policy: doc(1), policy_hash: 'f'.repeat(64) };
          await super.append(stream, [{ type: POLICY_VERSION_RECORDED, data: other }], { expectedRevision: 'no_stream' });
        }
        return super.append(stream, events, options);
      }
    })();
    const v = await new PutPolicyHandler(new PolicyRepository(racing)).execute(put('default', 5000));
    expect(v).toMatchObject({ version: 2, recorded: true });
    expect((await racing.readStream(policyStream('org_a', 'default'))).map((e) => (e.data as PolicyVersionRecorded).version)).toEqual([1, 2]);
  });
});
