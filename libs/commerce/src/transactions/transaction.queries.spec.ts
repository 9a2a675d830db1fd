import type { PolicyDocument } from '../domain/policy';
import { commerceWorld, specSignatureCheck } from './transaction-spec-fixtures';
import { PolicyVersionLookup, TransactionQueries } from './transaction.queries';

describe('TransactionQueries.replayMany (the approvals queue: the replays of a page of reviews)', () => {
  const policy: PolicyDocument = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } } as PolicyDocument;

  const world = () => {
    const w = commerceWorld();
    const reads: string[] = [];
    const policies: PolicyVersionLookup = {
      version: async (org, id, version) => {
        reads.push(`${org}/${id}/${version}`);
        return org === 'org_a' ? { policy, policy_hash: 'sha256:x', version } : null;
      },
    };
    const queries = new TransactionQueries(w.rows, w.store, policies, { check: specSignatureCheck } as never);
    return { ...w, queries, reads };
  };

  it('gives each transaction the same replay as replay() does, reading the shared policy version once', async () => {
    const w = world();
    const ids = [await w.escalated('org_a', 30_000), await w.escalated('org_a', 25_000), await w.escalated('org_a', 41_000)].map((i) => i.transaction_id);
    const many = await w.queries.replayMany('org_a', ids);
    expect(w.reads).toEqual(['org_a/default/1']);
    for (const [i, id] of ids.entries()) expect(many[i]).toEqual(await w.queries.replay('org_a', id));
    const failed = many[0]!.replayed.checks.filter((c) => !c.passed).pop();
    expect(failed).toMatchObject({ rule: expect.any(String) });
  });

  it("another organization's transaction, or one that does not exist, is null (and the others still replay)", async () => {
    const w = world();
    const mine = await w.escalated('org_a');
    const theirs = await w.escalated('org_b');
    const many = await w.queries.replayMany('org_a', [theirs.transaction_id, 'txn_00000000000000000000000000000000', mine.transaction_id]);
    expect(many[0]).toBeNull();
    expect(many[1]).toBeNull();
    expect(many[2]).toMatchObject({ transaction_id: mine.transaction_id, recorded: { decision: 'needs_review' } });
    expect(w.reads).not.toContain('org_b/default/1');
  });
});
