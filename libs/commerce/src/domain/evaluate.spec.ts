import type { AuthorizationRequest } from './authorization-request';
import { CapWindow, capWindows, evaluatePolicy, Evaluation, REASON_CODES, windowBounds } from './evaluate';
import type { PolicyDocument } from './policy';

const NOW = new Date('2026-11-21T20:00:00Z'); // a Saturday

const request = (over: Partial<AuthorizationRequest> = {}): AuthorizationRequest => ({
  amount_cents: 1000,
  currency: 'USD',
  merchant_id: 'm_good',
  purpose_tag: 'travel',
  expiration_iso: '2026-11-21T21:00:00Z',
  ...over,
});

/** DESIGN.md's example policy. */
const policy = (over: Partial<PolicyDocument> = {}): PolicyDocument => ({
  limits: { USD: { per_transaction_cents: 50000, review_above_cents: 20000 } },
  spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 100000 }],
  merchants: { blocked: ['m_bad'], allowed: null },
  purposes: { permitted: ['travel', 'software'] },
  agents: { 'agent-7': { per_transaction_cents: 1000 } },
  ...over,
});

const decide = (p: PolicyDocument | null, r: Partial<AuthorizationRequest> = {}, spent?: (w: CapWindow) => number) =>
  evaluatePolicy(p, request(r), { now: NOW, spent });
const outcome = (e: Evaluation) => [e.decision, e.reason_code];

describe('evaluatePolicy', () => {
  it('authorizes a request that passes every rule, listing the checks in order', () => {
    const e = decide(policy());
    expect(outcome(e)).toEqual(['authorized', null]);
    expect(e.checks.map((c) => c.rule)).toEqual(['expiry', 'policy', 'merchant_blocked', 'purpose_permitted', 'currency_limit', 'spend_cap', 'review_threshold']);
    expect(e.checks.every((c) => c.passed)).toBe(true);
  });

  it('authorizes anything under an empty policy: absent parts impose nothing', () => {
    expect(outcome(decide({}, { amount_cents: Number.MAX_SAFE_INTEGER, currency: 'JPY', merchant_id: 'any', purpose_tag: 'whatever' }))).toEqual(['authorized', null]);
    expect(outcome(decide({ limits: {}, merchants: {}, purposes: {}, agents: {}, spend_caps: [] }))).toEqual(['authorized', null]);
    expect(decide({}).checks.map((c) => c.rule)).toEqual(['expiry', 'policy']);
  });

  describe('EXPIRED', () => {
    it('blocks a request whose window has closed, at or before now', () => {
      expect(outcome(decide(policy(), { expiration_iso: '2026-11-21T19:59:59Z' }))).toEqual(['blocked', 'EXPIRED']);
      expect(outcome(decide(policy(), { expiration_iso: NOW.toISOString() }))).toEqual(['blocked', 'EXPIRED']);
      expect(outcome(decide(policy(), { expiration_iso: '2026-11-21T20:00:00.001Z' }))).toEqual(['authorized', null]);
      // The zone counts: 21:30+02:00 is 19:30Z.
      expect(outcome(decide(policy(), { expiration_iso: '2026-11-21T21:30:00+02:00' }))).toEqual(['blocked', 'EXPIRED']);
    });

    it('comes first: before a missing policy and before every other rule', () => {
      const past = { expiration_iso: '2020-01-01T00:00:00Z' };
      expect(outcome(decide(null, past))).toEqual(['blocked', 'EXPIRED']);
      const e = decide(policy(), { ...past, merchant_id: 'm_bad', amount_cents: 10 ** 9 });
      expect(outcome(e)).toEqual(['blocked', 'EXPIRED']);
      expect(e.checks).toEqual([{ rule: 'expiry', passed: false, detail: expect.stringContaining('2020-01-01T00:00:00Z') }]);
    });

    it('treats an unreadable expiry as closed', () => {
      expect(outcome(decide(policy(), { expiration_iso: 'not a date' }))).toEqual(['blocked', 'EXPIRED']);
    });
  });

  it('POLICY_NOT_FOUND: blocks everything when there is no policy', () => {
    const e = decide(null);
    expect(outcome(e)).toEqual(['blocked', 'POLICY_NOT_FOUND']);
    expect(e.checks.map((c) => [c.rule, c.passed])).toEqual([['expiry', true], ['policy', false]]);
  });

  describe('MERCHANT_BLOCKED', () => {
    it('blocks a blocked merchant (exact, case-sensitive match)', () => {
      expect(outcome(decide(policy(), { merchant_id: 'm_bad' }))).toEqual(['blocked', 'MERCHANT_BLOCKED']);
      expect(outcome(decide(policy(), { merchant_id: 'M_BAD' }))).toEqual(['authorized', null]);
    });

    it('blocks a merchant missing from an allowed list; null or absent allows any; [] allows none', () => {
      const allowOnly = policy({ merchants: { allowed: ['m_good'] } });
      expect(outcome(decide(allowOnly))).toEqual(['authorized', null]);
      expect(outcome(decide(allowOnly, { merchant_id: 'm_other' }))).toEqual(['blocked', 'MERCHANT_BLOCKED']);
      expect(outcome(decide(policy({ merchants: { allowed: null } }), { merchant_id: 'm_other' }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy({ merchants: {} }), { merchant_id: 'm_other' }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy({ merchants: { allowed: [] } })))).toEqual(['blocked', 'MERCHANT_BLOCKED']);
    });

    it('blocks a merchant on both lists: the block list wins', () => {
      const e = decide(policy({ merchants: { blocked: ['m_good'], allowed: ['m_good'] } }));
      expect(outcome(e)).toEqual(['blocked', 'MERCHANT_BLOCKED']);
      expect(e.checks.at(-1)).toMatchObject({ rule: 'merchant_blocked', passed: false });
    });

    it('comes before the purpose and amount rules', () => {
      expect(outcome(decide(policy(), { merchant_id: 'm_bad', purpose_tag: 'gambling', amount_cents: 10 ** 9 }))).toEqual(['blocked', 'MERCHANT_BLOCKED']);
    });
  });

  describe('PURPOSE_NOT_PERMITTED', () => {
    it('blocks a purpose that is not permitted, comparing case-insensitively', () => {
      expect(outcome(decide(policy(), { purpose_tag: 'gambling' }))).toEqual(['blocked', 'PURPOSE_NOT_PERMITTED']);
      expect(outcome(decide(policy(), { purpose_tag: 'Travel' }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy({ purposes: { permitted: ['SOFTWARE'] } }), { purpose_tag: 'software' }))).toEqual(['authorized', null]);
    });

    it('permits any purpose when no list is given, and none with an empty list', () => {
      expect(outcome(decide(policy({ purposes: {} }), { purpose_tag: 'anything' }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy({ purposes: undefined }), { purpose_tag: 'anything' }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy({ purposes: { permitted: [] } })))).toEqual(['blocked', 'PURPOSE_NOT_PERMITTED']);
    });

    it('comes before the amount rules', () => {
      expect(outcome(decide(policy(), { purpose_tag: 'gambling', amount_cents: 10 ** 9 }))).toEqual(['blocked', 'PURPOSE_NOT_PERMITTED']);
    });
  });

  describe('AMOUNT_EXCEEDS_LIMIT', () => {
    it("blocks an amount above the currency's per-transaction limit; the limit itself passes", () => {
      expect(outcome(decide(policy(), { amount_cents: 50001 }))).toEqual(['blocked', 'AMOUNT_EXCEEDS_LIMIT']);
      expect(outcome(decide(policy({ limits: { USD: { per_transaction_cents: 50000 } } }), { amount_cents: 50000 }))).toEqual(['authorized', null]);
    });

    it('blocks a currency the limits do not list, once any are listed', () => {
      const e = decide(policy(), { currency: 'EUR' });
      expect(outcome(e)).toEqual(['blocked', 'AMOUNT_EXCEEDS_LIMIT']);
      expect(e.checks.at(-1)).toEqual({ rule: 'currency_limit', passed: false, detail: 'the policy sets no limits for EUR' });
      expect(outcome(decide(policy({ limits: { USD: {}, EUR: {} } }), { currency: 'EUR', amount_cents: 10 ** 12 }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy({ limits: undefined, spend_caps: [] }), { currency: 'EUR', amount_cents: 10 ** 12 }))).toEqual(['authorized', null]);
    });

    it("blocks an amount above the agent's limit, only for that agent", () => {
      expect(outcome(decide(policy(), { delegated_authority: 'agent-7', amount_cents: 1001 }))).toEqual(['blocked', 'AMOUNT_EXCEEDS_LIMIT']);
      expect(decide(policy(), { delegated_authority: 'agent-7', amount_cents: 1001 }).checks.at(-1)).toMatchObject({ rule: 'agent_limit', passed: false });
      expect(outcome(decide(policy(), { delegated_authority: 'agent-7', amount_cents: 1000 }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy(), { delegated_authority: 'agent-8', amount_cents: 1001 }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy(), { delegated_authority: 'AGENT-7', amount_cents: 1001 }))).toEqual(['authorized', null]);
      expect(outcome(decide(policy(), { amount_cents: 1001 }))).toEqual(['authorized', null]);
    });

    it('checks the currency limit before the agent limit', () => {
      const e = decide(policy(), { delegated_authority: 'agent-7', amount_cents: 60000 });
      expect(e.checks.at(-1)).toMatchObject({ rule: 'currency_limit', passed: false });
    });

    it('does not mistake inherited object properties for agents or currencies', () => {
      for (const agent of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        expect(outcome(decide(policy(), { delegated_authority: agent, amount_cents: 5000 }))).toEqual(['authorized', null]);
      }
    });

    it('comes before spend caps', () => {
      expect(outcome(decide(policy(), { amount_cents: 60000 }, () => 10 ** 9))).toEqual(['blocked', 'AMOUNT_EXCEEDS_LIMIT']);
    });
  });

  describe('SPEND_CAP_EXCEEDED', () => {
    it('blocks when the recorded spend plus the amount would exceed a cap; reaching it exactly passes', () => {
      expect(outcome(decide(policy(), { amount_cents: 1000 }, () => 99000))).toEqual(['authorized', null]);
      const e = decide(policy(), { amount_cents: 1000 }, () => 99001);
      expect(outcome(e)).toEqual(['blocked', 'SPEND_CAP_EXCEEDED']);
      expect(e.checks.at(-1)).toEqual({ rule: 'spend_cap', passed: false, detail: 'daily:USD:2026-11-21: 99001 spent + 1000 of at most 100000' });
    });

    it('blocks a single amount over the cap even with nothing spent (no spend lookup = 0)', () => {
      const p = policy({ limits: undefined, spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 500 }] });
      expect(outcome(decide(p, { amount_cents: 500 }))).toEqual(['authorized', null]);
      expect(outcome(decide(p, { amount_cents: 501 }))).toEqual(['blocked', 'SPEND_CAP_EXCEEDED']);
    });

    it('checks every window of the currency, and only that currency', () => {
      const p = policy({
        limits: undefined,
        spend_caps: [
          { window: 'daily', currency: 'USD', amount_cents: 1000 },
          { window: 'weekly', currency: 'USD', amount_cents: 5000 },
          { window: 'monthly', currency: 'USD', amount_cents: 20000 },
          { window: 'daily', currency: 'EUR', amount_cents: 1 },
        ],
      });
      const spent = (by: Record<string, number>) => (w: CapWindow) => by[w.window] ?? 0;
      expect(outcome(decide(p, { amount_cents: 500 }, spent({ daily: 500, weekly: 4500, monthly: 19500 })))).toEqual(['authorized', null]);
      const weekly = decide(p, { amount_cents: 500 }, spent({ weekly: 4501 }));
      expect(outcome(weekly)).toEqual(['blocked', 'SPEND_CAP_EXCEEDED']);
      expect(weekly.checks.at(-1)?.detail).toMatch(/^weekly:USD:2026-11-16:/);
      expect(outcome(decide(p, { amount_cents: 500 }, spent({ monthly: 19501 })))).toEqual(['blocked', 'SPEND_CAP_EXCEEDED']);
      const seen: string[] = [];
      decide(p, { amount_cents: 500 }, (w) => (seen.push(w.key), 0));
      expect(seen).toEqual(['daily:USD:2026-11-21', 'weekly:USD:2026-11-16', 'monthly:USD:2026-11-01']);
    });

    it('comes before the review threshold', () => {
      expect(outcome(decide(policy(), { amount_cents: 30000 }, () => 80000))).toEqual(['blocked', 'SPEND_CAP_EXCEEDED']);
    });
  });

  describe('REVIEW_REQUIRED', () => {
    it("sends an amount above the currency's review threshold to review; the threshold itself passes", () => {
      expect(outcome(decide(policy(), { amount_cents: 20001 }))).toEqual(['needs_review', 'REVIEW_REQUIRED']);
      expect(outcome(decide(policy(), { amount_cents: 20000 }))).toEqual(['authorized', null]);
    });

    it("sends an amount above the agent's review threshold to review", () => {
      const p = policy({ agents: { 'agent-9': { review_above_cents: 500 } } });
      const e = decide(p, { delegated_authority: 'agent-9', amount_cents: 501 });
      expect(outcome(e)).toEqual(['needs_review', 'REVIEW_REQUIRED']);
      expect(e.checks.at(-1)).toMatchObject({ rule: 'agent_review_threshold', passed: false });
      expect(outcome(decide(p, { delegated_authority: 'agent-9', amount_cents: 500 }))).toEqual(['authorized', null]);
      expect(outcome(decide(p, { amount_cents: 501 }))).toEqual(['authorized', null]);
    });

    it('reviews every request with a threshold of 0', () => {
      expect(outcome(decide({ limits: { USD: { review_above_cents: 0 } } }, { amount_cents: 1 }))).toEqual(['needs_review', 'REVIEW_REQUIRED']);
    });
  });

  it('is pure: the same inputs give the same evaluation, and nothing is mutated', () => {
    const p = policy();
    const r = request({ amount_cents: 25000 });
    const frozen = JSON.stringify([p, r]);
    const a = evaluatePolicy(p, r, { now: NOW, spent: () => 100 });
    const b = evaluatePolicy(p, r, { now: new Date(NOW), spent: () => 100 });
    expect(a).toEqual(b);
    expect(JSON.stringify([p, r])).toBe(frozen);
  });

  it('can produce every reason code', () => {
    const produced = new Set([
      decide(policy(), { amount_cents: 60000 }).reason_code,
      decide(policy(), { merchant_id: 'm_bad' }).reason_code,
      decide(policy(), { purpose_tag: 'x' }).reason_code,
      decide(policy(), { expiration_iso: '2000-01-01T00:00:00Z' }).reason_code,
      decide(policy(), {}, () => 100000).reason_code,
      decide(null).reason_code,
      decide(policy(), { amount_cents: 30000 }).reason_code,
    ]);
    expect([...produced].sort()).toEqual([...REASON_CODES].sort());
  });
});

describe('spend-cap windows', () => {
  it('daily: the UTC calendar day', () => {
    expect(windowBounds('daily', new Date('2026-11-21T00:00:00Z'))).toEqual({ start: new Date('2026-11-21T00:00:00Z'), end: new Date('2026-11-22T00:00:00Z') });
    expect(windowBounds('daily', new Date('2026-11-21T23:59:59.999Z')).start).toEqual(new Date('2026-11-21T00:00:00Z'));
    expect(windowBounds('daily', new Date('2026-12-31T12:00:00Z')).end).toEqual(new Date('2027-01-01T00:00:00Z'));
  });

  it('weekly: the ISO week, Monday 00:00 UTC to the next Monday', () => {
    const monday = { start: new Date('2026-11-16T00:00:00Z'), end: new Date('2026-11-23T00:00:00Z') };
    for (const at of ['2026-11-16T00:00:00Z', '2026-11-18T12:00:00Z', '2026-11-21T20:00:00Z', '2026-11-22T23:59:59.999Z']) {
      expect([at, windowBounds('weekly', new Date(at))]).toEqual([at, monday]);
    }
    expect(windowBounds('weekly', new Date('2026-11-23T00:00:00Z')).start).toEqual(new Date('2026-11-23T00:00:00Z'));
    // Across a year end: Thursday 2027-01-01 is in the week of Monday 2026-12-28.
    expect(windowBounds('weekly', new Date('2027-01-01T08:00:00Z'))).toEqual({ start: new Date('2026-12-28T00:00:00Z'), end: new Date('2027-01-04T00:00:00Z') });
  });

  it('monthly: the UTC calendar month, leap February included', () => {
    expect(windowBounds('monthly', new Date('2026-11-21T20:00:00Z'))).toEqual({ start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') });
    expect(windowBounds('monthly', new Date('2026-12-31T23:59:59Z')).end).toEqual(new Date('2027-01-01T00:00:00Z'));
    expect(windowBounds('monthly', new Date('2028-02-29T10:00:00Z'))).toEqual({ start: new Date('2028-02-01T00:00:00Z'), end: new Date('2028-03-01T00:00:00Z') });
  });

  it("lists the policy's windows for a currency at an instant, with stable keys", () => {
    const p = policy({
      spend_caps: [
        { window: 'monthly', currency: 'USD', amount_cents: 3 },
        { window: 'daily', currency: 'EUR', amount_cents: 2 },
        { window: 'daily', currency: 'USD', amount_cents: 1 },
      ],
    });
    expect(capWindows(p, 'USD', NOW)).toEqual([
      { key: 'monthly:USD:2026-11-01', window: 'monthly', currency: 'USD', starts_at: '2026-11-01T00:00:00.000Z', ends_at: '2026-12-01T00:00:00.000Z', limit_cents: 3 },
      { key: 'daily:USD:2026-11-21', window: 'daily', currency: 'USD', starts_at: '2026-11-21T00:00:00.000Z', ends_at: '2026-11-22T00:00:00.000Z', limit_cents: 1 },
    ]);
    expect(capWindows(p, 'EUR', NOW).map((w) => w.key)).toEqual(['daily:EUR:2026-11-21']);
    expect(capWindows(p, 'JPY', NOW)).toEqual([]);
    expect(capWindows({}, 'USD', NOW)).toEqual([]);
  });
});
