import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { AnchorTimelinesCommand, AnchorTimelinesHandler, ExpirySweep } from '@app/commerce';
import { EventStore, eventHash, SqlDatabase } from '@app/event-store';
import { verifyTimeline } from '@app/sdk';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Timelines that cannot be cut short unnoticed (issue 12, item 3): every path to a terminal state
 * ends the timeline with `timeline.anchored`, a signed payment_timeline_anchor.v1 naming the
 * terminal event's hash; GET …/events reports a missing, mismatched, forged or truncated end as
 * invalid (chain_valid false), and timelines that ended before anchors existed are anchored by the
 * backfill (or as they are read).
 */
describe('timeline anchors (e2e)', () => {
  let t: TestApp;
  let db: SqlDatabase;
  let keys: unknown;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;

  // Its own schema (or data dir): the backfill anchors every unanchored timeline it finds, and in
  // the PostgreSQL pass another suite's process (which may rotate the signing key meanwhile)
  // would otherwise anchor these, or this one theirs, under keys read before the rotation.
  beforeAll(async () => {
    iso = await isolatedEnv();
    t = await startTestApp({ ...iso.env, RATE_LIMITS: 'off' });
    db = t.app.get(SqlDatabase);
    keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await iso?.dispose();
  });

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });
  const integrator = async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`anchors-${randomBytes(3).toString('hex')}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read', 'receipts:read', 'approvals:manage'], mode: 'test' });
    const policy = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } }, merchants: { blocked: ['m_bad'] } };
    expect((await call('PUT', '/api/cdp/policies/default', key, policy)).statusCode).toBe(200);
    return key;
  };
  const authorize = async (key: string, over: Record<string, unknown> = {}) => {
    const res = await call('POST', '/api/cdp/authorize', key, {
      amount_cents: 1_000,
      currency: 'USD',
      merchant_id: 'm_books',
      purpose_tag: 'software',
      expiration_iso: new Date(Date.now() + 3600_000).toISOString(),
      ...over,
    });
    expect(res.statusCode).toBe(200);
    return res.json() as { transaction_id: string; authorization_id: string; decision: string; expires_at: string };
  };
  /**
   * Deletes a stream's events from `revision` on, as someone with the database could; with `head`,
   * also rewinds the store's own record of the stream's head (which otherwise shows the cut).
   */
  const cutTail = async (txn: string, revision: number, head: boolean) => {
    const stream = `transaction-${txn}`;
    await db.query('DELETE FROM events WHERE stream_id = $1 AND revision >= $2', [stream, revision]);
    if (head) await db.query('UPDATE streams SET revision = $2, last_hash = (SELECT hash FROM events WHERE stream_id = $1 AND revision = $2) WHERE stream_id = $1', [stream, revision - 1]);
  };
  const timeline = async (key: string, txn: string) => {
    const res = await call('GET', `/api/cdp/transactions/${txn}/events`, key);
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  /** Asserts the timeline ends with a valid anchor of its terminal event, checked by the service and by the SDK. */
  const expectAnchored = async (key: string, txn: string, status: string, terminalType: string) => {
    const tl = await timeline(key, txn);
    const [terminal, anchor] = tl.events.slice(-2);
    expect(terminal).toMatchObject({ event_type: terminalType, status });
    expect(anchor).toMatchObject({ event_type: 'timeline.anchored', status, actor: { type: 'system', id: 'timeline-anchor' } });
    expect(tl).toMatchObject({
      chain_valid: true,
      anchor: {
        valid: true,
        state: 'anchored',
        terminal_status: status,
        revision: anchor.sequence - 1,
        record: {
          schema_version: 'payment_timeline_anchor.v1',
          payload: { transaction_id: txn, terminal_status: status, terminal_event_type: terminalType, last_event_hash: terminal.hash, last_event_revision: terminal.sequence - 1, event_count: terminal.sequence },
        },
      },
    });
    expect(verifyTimeline(tl, { keys, expectedStatus: status })).toMatchObject({ valid: true, anchor: { state: 'anchored', terminal_status: status } });
    // The anchor verifies on its own, as any signed record does.
    expect((await call('POST', '/api/cdp/receipts/verify', key, tl.anchor.record)).json()).toMatchObject({ verified: true, schema_version: 'payment_timeline_anchor.v1', transaction_id: txn });
    return tl;
  };

  it('every path to a terminal state anchors the timeline: blocked, rejected by a person, declined, receipt issued, expired (escalated and authorized)', async () => {
    const key = await integrator();
    // Blocked by the policy at authorize.
    const blocked = await authorize(key, { merchant_id: 'm_bad' });
    await expectAnchored(key, blocked.transaction_id, 'rejected', 'authorization.rejected');
    // Rejected by a reviewer.
    const escalated = await authorize(key, { amount_cents: 30_000 });
    expect((await call('POST', `/api/cdp/approvals/${escalated.authorization_id}/reject`, key, { note: 'no' })).statusCode).toBe(200);
    await expectAnchored(key, escalated.transaction_id, 'rejected', 'authorization.rejected');
    // Declined by the provider (the sandbox declines 10.02).
    const declined = await authorize(key, { amount_cents: 1_002 });
    expect((await call('POST', `/api/cdp/transactions/${declined.transaction_id}/execute`, key)).statusCode).toBe(402);
    await expectAnchored(key, declined.transaction_id, 'declined', 'execution.failed');
    // Settled: the receipt ends it, and the receipt is still served (it is no longer the last event).
    const settled = await authorize(key);
    expect((await call('POST', `/api/cdp/transactions/${settled.transaction_id}/execute`, key)).statusCode).toBe(200);
    await expectAnchored(key, settled.transaction_id, 'receipt_issued', 'receipt.issued');
    expect((await call('GET', `/api/cdp/receipts/${settled.transaction_id}`, key)).json()).toMatchObject({ schema_version: 'payment_receipt.v1' });
    expect((await call('POST', `/api/cdp/transactions/${settled.transaction_id}/execute`, key)).json()).toMatchObject({ outcome: 'already_executed', receipt: { schema_version: 'payment_receipt.v1' } });
    // Expired by the sweep: an escalated one (rejected) and an authorized one (expired).
    const soon = new Date(Date.now() + 1500).toISOString();
    const lapsedReview = await authorize(key, { amount_cents: 30_000, expiration_iso: soon });
    const lapsed = await authorize(key, { expiration_iso: soon });
    await new Promise((r) => setTimeout(r, Date.parse(soon) - Date.now() + 100));
    await t.app.get(ExpirySweep).tick();
    await expectAnchored(key, lapsedReview.transaction_id, 'rejected', 'authorization.rejected');
    await expectAnchored(key, lapsed.transaction_id, 'expired', 'authorization.rejected');
    // An open transaction has nothing to anchor yet, and is valid.
    const open = await authorize(key);
    expect(await timeline(key, open.transaction_id)).toMatchObject({ chain_valid: true, anchor: { valid: true, state: 'open', record: null } });
  }, 60_000);

  it('a timeline with its tail deleted in the database is invalid: the anchor, or the anchor and the terminal event', async () => {
    const key = await integrator();
    const a = await authorize(key, { merchant_id: 'm_bad' });
    await cutTail(a.transaction_id, 2, false);
    const noAnchor = await timeline(key, a.transaction_id);
    // The store's record of the stream's head shows the cut, and so does the anchor check, on its own.
    expect(noAnchor).toMatchObject({ chain_valid: false, chain: { valid: false, reason: 'revision_gap' }, anchor: { valid: false, state: 'truncated', terminal_status: 'rejected' } });
    expect(noAnchor.events.map((e: { event_type: string }) => e.event_type)).toEqual(['authorization.requested', 'authorization.rejected']); // not anchored again
    expect(verifyTimeline(noAnchor, { keys })).toMatchObject({ valid: false, reason: 'anchor_missing' });

    // The head rewound too: every link, and the head, hold; the end does not.
    const b = await authorize(key, { merchant_id: 'm_bad' });
    await cutTail(b.transaction_id, 2, true);
    expect(await timeline(key, b.transaction_id)).toMatchObject({ chain_valid: false, chain: { valid: true }, anchor: { valid: false, state: 'truncated' } });
    // Anchor and terminal event cut, head rewound: the events alone look open; the read model and the status show the cut.
    await cutTail(b.transaction_id, 1, true);
    const cut = await timeline(key, b.transaction_id);
    expect(cut).toMatchObject({ chain_valid: false, chain: { valid: true }, anchor: { valid: false, state: 'truncated', detail: expect.stringContaining('removed from its end') } });
    expect(verifyTimeline(cut, { keys })).toMatchObject({ valid: true, anchor: { state: 'open' } });
    expect(verifyTimeline(cut, { keys, expectedStatus: 'rejected' })).toMatchObject({ valid: false, reason: 'truncated' });

    // An open transaction's last event cut, head rewound: shorter than the service recorded it.
    const open = await authorize(key);
    await cutTail(open.transaction_id, 1, true);
    expect(await timeline(key, open.transaction_id)).toMatchObject({ chain_valid: false, chain: { valid: true }, anchor: { state: 'truncated' } });
  });

  it('an anchor with a forged signature, or naming another hash, is invalid even when the chain is rebuilt around it', async () => {
    const key = await integrator();
    const rewrite = async (txn: string, edit: (anchor: { payload: Record<string, unknown>; signature: { value: string } }) => void) => {
      // The event as the store reads it (its hashed fields normalized), edited, its hash recomputed: the chain holds.
      const [row] = await t.app.get(EventStore).readStream(`transaction-${txn}`, { fromRevision: 2 });
      const data = row.data as { anchor: never };
      edit(data.anchor);
      const hash = eventHash({ ...row, data });
      await db.query('UPDATE events SET data = $2::json, hash = $3 WHERE event_id = $1', [row.event_id, JSON.stringify(data), hash]);
      await db.query('UPDATE streams SET last_hash = $2 WHERE stream_id = $1', [row.stream_id, hash]);
    };
    const forged = await authorize(key, { merchant_id: 'm_bad' });
    await rewrite(forged.transaction_id, (a) => (a.signature.value = a.signature.value.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))));
    const f = await timeline(key, forged.transaction_id);
    expect(f).toMatchObject({ chain_valid: false, chain: { valid: true }, anchor: { valid: false, state: 'signature_invalid' } });
    expect(verifyTimeline(f, { keys })).toMatchObject({ valid: false, reason: 'anchor_signature_invalid' });

    const other = await authorize(key, { merchant_id: 'm_bad' });
    await rewrite(other.transaction_id, (a) => (a.payload.last_event_hash = 'sha256:' + '0'.repeat(64)));
    const o = await timeline(key, other.transaction_id);
    expect(o).toMatchObject({ chain_valid: false, chain: { valid: true }, anchor: { valid: false, state: 'mismatch', detail: expect.stringContaining('last_event_hash') } });
    expect(verifyTimeline(o, { keys })).toMatchObject({ valid: false, reason: 'anchor_mismatch' });
  });

  it('timelines that ended before anchors existed are anchored by the backfill, or as they are read', async () => {
    const key = await integrator();
    // Two transactions as they were before this change: terminal, no anchor, the read model's anchored_revision NULL.
    const old = [await authorize(key, { merchant_id: 'm_bad' }), await authorize(key, { merchant_id: 'm_bad' })];
    const asBefore = async (txn: string) => {
      await cutTail(txn, 2, true);
      await db.query('UPDATE commerce_transactions SET revision = 1, anchored_revision = NULL WHERE transaction_id = $1', [txn]);
    };
    for (const d of old) {
      await asBefore(d.transaction_id);
      expect(Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE stream_id = $1', [`transaction-${d.transaction_id}`]))[0].n)).toBe(2);
    }
    // The backfill (the anchoring sweep runs it when an api process starts, then on its interval).
    expect(await t.app.get(AnchorTimelinesHandler).execute(new AnchorTimelinesCommand())).toBeGreaterThanOrEqual(1);
    await expectAnchored(key, old[0].transaction_id, 'rejected', 'authorization.rejected');
    // The second again without its anchor (as if the backfill had not come by yet): reading it anchors it (unless the sweep's timer got there first).
    await asBefore(old[1].transaction_id);
    const read = await expectAnchored(key, old[1].transaction_id, 'rejected', 'authorization.rejected');
    expect(read.events).toHaveLength(3);
    expect(await t.app.get(AnchorTimelinesHandler).execute(new AnchorTimelinesCommand(1, { orgId: 'org_nobody', transactionId: old[1].transaction_id }))).toBe(0);
  });

  it("another organization's timeline is 404, and a malformed id 400", async () => {
    const key = await integrator();
    const other = await integrator();
    const d = await authorize(key, { merchant_id: 'm_bad' });
    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, other)).statusCode).toBe(404);
    const bad = await call('GET', '/api/cdp/transactions/txn_nope/events', key);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ ok: false });
  });
});
