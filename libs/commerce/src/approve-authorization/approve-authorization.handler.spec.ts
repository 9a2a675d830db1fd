import { DomainError } from '@app/core';
import { verifyRecord } from '../receipts/signed-record';
import { commerceWorld, specSignatureCheck } from '../transactions/transaction-spec-fixtures';
import { ApproveAuthorizationCommand } from './approve-authorization.command';
import { ApproveAuthorizationHandler } from './approve-authorization.handler';
import { ExpireAuthorizationsCommand } from '../expire-authorizations/expire-authorizations.command';
import { ExpireAuthorizationsHandler } from '../expire-authorizations/expire-authorizations.handler';
import { RejectAuthorizationCommand } from '../reject-authorization/reject-authorization.command';
import { RejectAuthorizationHandler } from '../reject-authorization/reject-authorization.handler';

describe('ApproveAuthorizationHandler (Transaction aggregate on the in-memory store)', () => {
  const setup = () => {
    const w = commerceWorld();
    return { ...w, sut: new ApproveAuthorizationHandler(w.rows, w.transactions, w.clock, w.authority, w.rules) };
  };
  const approve = (org: string, auth: string, amount?: number) => new ApproveAuthorizationCommand(org, auth, 'api_key:key_reviewer', amount, 'ok');

  it('records authorization.human_approved, releasing what a lower amount no longer holds', async () => {
    const { sut, store, escalated } = setup();
    const t = await escalated('org_a', 30_000);
    const row = await sut.execute(approve('org_a', t.authorization_id, 20_000));
    expect(row).toMatchObject({ status: 'authorized', decision: 'authorized', approved_amount_cents: 20_000, revision: 2 });
    const [e] = await store.readStream(`transaction-${t.transaction_id}`, { fromRevision: 2 });
    expect(e).toMatchObject({
      type: 'authorization.human_approved',
      data: { ...t, status: 'authorized', approver: 'api_key:key_reviewer', note: 'ok', amount_cents: 20_000, released: [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 10_000 }] },
      metadata: { actor: 'api_key:key_reviewer', correlation_id: t.transaction_id },
    });
    expect(store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 20_000, cap_cents: 100_000 }]);
    const [escalation] = await store.readStream(`transaction-${t.transaction_id}`, { fromRevision: 1, limit: 1 });
    const record = (e.data as { review_record: unknown }).review_record;
    expect(record).toMatchObject({
      schema_version: 'payment_review.v1',
      payload: { review: 'approved', reviewer: { key_id: 'key_reviewer' }, note: 'ok', requested_amount_cents: 30_000, approved_amount_cents: 20_000, decided_event_hash: escalation.hash },
    });
    expect(verifyRecord(record, specSignatureCheck)).toMatchObject({ valid: true });
  });

  it('refuses a raise, another organization, and a second decision; each records nothing', async () => {
    const { sut, store, escalated } = setup();
    const t = await escalated('org_a', 30_000);
    await expect(sut.execute(approve('org_a', t.authorization_id, 30_001))).rejects.toMatchObject({ code: 'approval_amount_exceeds_request' });
    await expect(sut.execute(approve('org_b', t.authorization_id))).rejects.toMatchObject({ code: 'not_found' });
    await sut.execute(approve('org_a', t.authorization_id));
    await expect(sut.execute(approve('org_a', t.authorization_id))).rejects.toMatchObject({ code: 'authorization_not_pending', details: { status: 'authorized' } });
    expect(await store.readStream(`transaction-${t.transaction_id}`)).toHaveLength(3);
  });

  it('gives racing reviewers one outcome: the loser learns what it lost to', async () => {
    const { sut, escalated } = setup();
    const t = await escalated('org_a');
    const outcomes = await Promise.allSettled([sut.execute(approve('org_a', t.authorization_id)), sut.execute(approve('org_a', t.authorization_id))]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const lost = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')!;
    expect(lost.reason).toBeInstanceOf(DomainError);
    expect(lost.reason).toMatchObject({ code: 'authorization_not_pending' });
  });

  it('records the expiry, never a human decision, once the window has closed', async () => {
    const { sut, store, escalated, clock } = setup();
    const t = await escalated('org_a', 5_000, '2026-11-25T10:30:00.000Z');
    clock.advance(3600_000);
    await expect(sut.execute(approve('org_a', t.authorization_id))).rejects.toMatchObject({ code: 'authorization_expired' });
    const [anchor, last] = await store.readStream(`transaction-${t.transaction_id}`, { direction: 'backwards', limit: 2 });
    expect(last).toMatchObject({ type: 'authorization.rejected', data: { reason_code: 'EXPIRED', rejected_by: 'expiry' }, metadata: { actor: 'system:expiry-sweep' } });
    expect(anchor).toMatchObject({ type: 'timeline.anchored', data: { status: 'rejected', anchor: { payload: { last_event_hash: last.hash } } } });
    expect(store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 0, cap_cents: 100_000 }]);
  });

  it('separation of duties: under require_distinct_reviewer neither the requesting key nor another key of its owner may review; records nothing', async () => {
    const { sut, store, escalated, policyVersions, keyOwners } = setup();
    const t = await escalated('org_a', 30_000);
    policyVersions.set('org_a/default/1', { review: { require_distinct_reviewer: true } });
    keyOwners.set('key_agent', 'dana').set('key_dana_laptop', 'dana').set('key_reviewer', 'sam');
    const as = (actor: string) => new ApproveAuthorizationCommand('org_a', t.authorization_id, actor, undefined, null);
    await expect(sut.execute(as('api_key:key_agent'))).rejects.toMatchObject({ code: 'reviewer_is_requester' });
    await expect(sut.execute(as('api_key:key_dana_laptop'))).rejects.toMatchObject({ code: 'reviewer_is_requester' });
    expect(await store.readStream(`transaction-${t.transaction_id}`)).toHaveLength(2);
    expect(await sut.execute(as('api_key:key_reviewer'))).toMatchObject({ status: 'authorized' });
  });

  describe('review.approvals_required: 2', () => {
    const twoApprovals = async (extra: Record<string, unknown> = {}) => {
      const w = setup();
      const t = await w.escalated('org_a', 30_000);
      w.policyVersions.set('org_a/default/1', { review: { approvals_required: 2, ...extra } });
      w.keyOwners.set('key_agent', 'dana').set('key_sam', 'sam').set('key_sam_laptop', 'sam').set('key_lee', 'lee');
      const as = (actor: string, amount?: number) => new ApproveAuthorizationCommand('org_a', t.authorization_id, actor, amount, `ok from ${actor}`);
      const stream = () => w.store.readStream(`transaction-${t.transaction_id}`);
      return { ...w, t, as, stream };
    };

    it('a first approval is recorded and signed, the transaction stays needs_review; a second reviewer authorizes it at the lower amount', async () => {
      const { sut, t, as, stream, store } = await twoApprovals();
      const first = await sut.execute(as('api_key:key_sam', 25_000));
      expect(first).toMatchObject({ status: 'needs_review', decision: 'needs_review', revision: 2 });
      expect(first.approved_amount_cents ?? null).toBeNull();
      const [, escalation, recorded] = await stream();
      expect(recorded).toMatchObject({
        type: 'authorization.approval_recorded',
        data: { ...t, status: 'needs_review', approver: 'api_key:key_sam', amount_cents: 25_000, approval: 1, approvals_required: 2 },
        metadata: { actor: 'api_key:key_sam', correlation_id: t.transaction_id },
      });
      const firstRecord = (recorded.data as { review_record: unknown }).review_record;
      expect(firstRecord).toMatchObject({ payload: { review: 'approved', approved_amount_cents: 25_000, approval: 1, approvals_required: 2, decided_event_hash: escalation.hash } });
      expect(verifyRecord(firstRecord, specSignatureCheck)).toMatchObject({ valid: true });
      expect(store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 30_000, cap_cents: 100_000 }]);

      const second = await sut.execute(as('api_key:key_lee', 28_000));
      expect(second).toMatchObject({ status: 'authorized', decision: 'authorized', approved_amount_cents: 25_000, revision: 3 });
      const approved = (await stream())[3];
      expect(approved).toMatchObject({
        type: 'authorization.human_approved',
        data: { status: 'authorized', approver: 'api_key:key_lee', amount_cents: 25_000, approvers: ['api_key:key_sam', 'api_key:key_lee'], released: [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 5_000 }] },
      });
      const secondRecord = (approved.data as { review_record: unknown }).review_record;
      expect(secondRecord).toMatchObject({ payload: { approved_amount_cents: 28_000, approval: 2, approvals_required: 2, decided_event_hash: recorded.hash } });
      expect(verifyRecord(secondRecord, specSignatureCheck)).toMatchObject({ valid: true });
      expect(store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 25_000, cap_cents: 100_000 }]);
    });

    it('the same reviewer again, by the same key or another key of the same owner, is refused with reviewer_already_approved; records nothing', async () => {
      const { sut, as, stream } = await twoApprovals();
      await sut.execute(as('api_key:key_sam'));
      await expect(sut.execute(as('api_key:key_sam'))).rejects.toMatchObject({ code: 'reviewer_already_approved', details: { approvals_required: 2, approvals_recorded: 1 } });
      await expect(sut.execute(as('api_key:key_sam_laptop'))).rejects.toMatchObject({ code: 'reviewer_already_approved' });
      expect(await stream()).toHaveLength(3);
      expect(await sut.execute(as('api_key:key_lee'))).toMatchObject({ status: 'authorized' });
    });

    it('a first approval run again under its idempotent name (its answer was never stored) answers the transaction; another request of the same reviewer is still refused', async () => {
      const { sut, t, stream } = await twoApprovals();
      const keyed = () => new ApproveAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_sam', undefined, 'ok', null, 'req-sam-1');
      const first = await sut.execute(keyed());
      expect((await stream())[2].metadata).toMatchObject({ actor: 'api_key:key_sam', request_id: 'req-sam-1' });
      expect(await sut.execute(keyed())).toEqual(first);
      expect(await stream()).toHaveLength(3);
      const other = new ApproveAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_sam', undefined, 'ok', null, 'req-sam-2');
      await expect(sut.execute(other)).rejects.toMatchObject({ code: 'reviewer_already_approved' });
    });

    it('keys without a recorded owner are distinct reviewers by key alone', async () => {
      const { sut, as } = await twoApprovals();
      await sut.execute(as('api_key:key_x'));
      await expect(sut.execute(as('api_key:key_x'))).rejects.toMatchObject({ code: 'reviewer_already_approved' });
      expect(await sut.execute(as('api_key:key_y'))).toMatchObject({ status: 'authorized' });
    });

    it('without require_distinct_reviewer too, the requester (its key, a key of its owner, a key it minted) gives neither approval; records nothing', async () => {
      const { sut, as, stream, keyCreators, keyOwners } = await twoApprovals();
      keyOwners.set('key_dana_laptop', 'dana');
      keyCreators.set('key_minted', 'key_agent').set('key_minted2', 'key_minted');
      for (const requester of ['api_key:key_agent', 'api_key:key_dana_laptop', 'api_key:key_minted2']) {
        await expect(sut.execute(as(requester))).rejects.toMatchObject({ code: 'reviewer_is_requester' });
      }
      await sut.execute(as('api_key:key_sam'));
      await expect(sut.execute(as('api_key:key_minted'))).rejects.toMatchObject({ code: 'reviewer_is_requester' });
      expect(await stream()).toHaveLength(3);
      expect(await sut.execute(as('api_key:key_lee'))).toMatchObject({ status: 'authorized' });
    });

    it('a key and the keys it minted (created_by) are one reviewer: the second approval needs another principal', async () => {
      const { sut, as, keyCreators } = await twoApprovals();
      keyCreators.set('key_sam_child', 'key_sam').set('key_lee_child', 'key_lee');
      await sut.execute(as('api_key:key_sam_child'));
      await expect(sut.execute(as('api_key:key_sam'))).rejects.toMatchObject({ code: 'reviewer_already_approved' });
      expect(await sut.execute(as('api_key:key_lee_child'))).toMatchObject({ status: 'authorized' });
    });

    it('with require_distinct_reviewer, the requester may be neither the first nor the second approver', async () => {
      const { sut, as } = await twoApprovals({ require_distinct_reviewer: true });
      await expect(sut.execute(as('api_key:key_agent'))).rejects.toMatchObject({ code: 'reviewer_is_requester' });
      await sut.execute(as('api_key:key_sam'));
      await expect(sut.execute(as('api_key:key_agent'))).rejects.toMatchObject({ code: 'reviewer_is_requester' });
      expect(await sut.execute(as('api_key:key_lee'))).toMatchObject({ status: 'authorized' });
    });

    it('a rejection after one approval rejects, releasing the whole reservation', async () => {
      const w = await twoApprovals();
      await w.sut.execute(w.as('api_key:key_sam', 10_000));
      const reject = new RejectAuthorizationHandler(w.rows, w.transactions, w.clock, w.authority, w.rules);
      expect(await reject.execute(new RejectAuthorizationCommand('org_a', w.t.authorization_id, 'api_key:key_lee', 'no'))).toMatchObject({ status: 'rejected', decision: 'blocked' });
      expect(w.store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 0, cap_cents: 100_000 }]);
      expect((await w.stream()).map((e) => e.type)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded', 'authorization.rejected', 'timeline.anchored']);
    });

    it('an authorization whose window closes after one approval expires: rejected with EXPIRED, everything released, the late second approval refused', async () => {
      const w = setup();
      const t = await w.escalated('org_a', 30_000, '2026-11-25T10:30:00.000Z');
      w.policyVersions.set('org_a/default/1', { review: { approvals_required: 2 } });
      await w.sut.execute(new ApproveAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_sam', 10_000, null));
      w.clock.advance(3600_000);
      expect(await new ExpireAuthorizationsHandler(w.rows, w.transactions, w.clock).execute(new ExpireAuthorizationsCommand())).toBe(1);
      expect(await w.rows.byId('org_a', t.transaction_id)).toMatchObject({ status: 'rejected', reason_code: 'EXPIRED' });
      expect(w.store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 0, cap_cents: 100_000 }]);
      await expect(w.sut.execute(new ApproveAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_lee', undefined, null))).rejects.toMatchObject({ code: 'authorization_not_pending', details: { status: 'rejected' } });
    });

    it('racing reviewers give one outcome: two different ones authorize it once; the same one twice records one approval', async () => {
      const a = await twoApprovals();
      const raced = await Promise.allSettled([a.sut.execute(a.as('api_key:key_sam')), a.sut.execute(a.as('api_key:key_lee')), a.sut.execute(a.as('api_key:key_x'))]);
      const fulfilled = raced.filter((o): o is PromiseFulfilledResult<Awaited<ReturnType<typeof a.sut.execute>>> => o.status === 'fulfilled').map((o) => o.value.status);
      expect(fulfilled.sort()).toEqual(['authorized', 'needs_review']);
      const lost = raced.find((o): o is PromiseRejectedResult => o.status === 'rejected')!;
      expect(lost.reason).toMatchObject({ code: 'authorization_not_pending', details: { status: 'authorized' } });
      expect((await a.stream()).map((e) => e.type)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded', 'authorization.human_approved']);

      const b = await twoApprovals();
      const twice = await Promise.allSettled([b.sut.execute(b.as('api_key:key_sam')), b.sut.execute(b.as('api_key:key_sam'))]);
      expect(twice.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(twice.find((o): o is PromiseRejectedResult => o.status === 'rejected')!.reason).toMatchObject({ code: 'reviewer_already_approved' });
      expect((await b.stream()).map((e) => e.type)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded']);
    });
  });

  it('without the rule (the default), and for keys with no owner recorded, only the key itself counts', async () => {
    const { sut, escalated, policyVersions } = setup();
    const free = await escalated('org_a', 30_000);
    expect(await sut.execute(new ApproveAuthorizationCommand('org_a', free.authorization_id, 'api_key:key_agent', undefined, null))).toMatchObject({ status: 'authorized' });
    const ruled = await escalated('org_a', 30_000);
    policyVersions.set('org_a/default/1', { review: { require_distinct_reviewer: true } });
    expect(await sut.execute(new ApproveAuthorizationCommand('org_a', ruled.authorization_id, 'api_key:key_other', undefined, null))).toMatchObject({ status: 'authorized' });
  });
});
