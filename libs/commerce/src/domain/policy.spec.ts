import { createHash } from 'node:crypto';
import { AppError } from '@app/core';
import { isPolicyId, MAX_POLICY_LIST, parsePolicy, policyHash, PolicyDocument } from './policy';

/** DESIGN.md's example policy. */
const designExample = (): PolicyDocument => ({
  limits: { USD: { per_transaction_cents: 50000, review_above_cents: 20000 } },
  spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 100000 }],
  merchants: { blocked: ['m_bad'], allowed: null },
  purposes: { permitted: ['travel', 'software'] },
  agents: { 'agent-7': { per_transaction_cents: 1000 } },
});

const rejection = (input: unknown): AppError => {
  try {
    parsePolicy(input);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
};
const details = (input: unknown) => rejection(input).details as Array<{ field: string; message: string }>;
const fields = (input: unknown) => details(input).map((d) => d.field);

describe('policy document', () => {
  it("accepts DESIGN.md's example unchanged, and the empty policy", () => {
    expect(parsePolicy(designExample())).toEqual(designExample());
    expect(parsePolicy({})).toEqual({});
    const parts: PolicyDocument = {
      limits: { JPY: {}, EUR: { review_above_cents: 0 }, KWD: { per_transaction_cents: 5 } },
      spend_caps: [
        { window: 'weekly', currency: 'EUR', amount_cents: 1 },
        { window: 'monthly', currency: 'EUR', amount_cents: 10 },
        { window: 'daily', currency: 'JPY', amount_cents: 10 },
      ],
      merchants: { allowed: ['m_1', 'shop:eu.2'] },
      purposes: {},
      agents: { 'did:cd:agent:x y': { review_above_cents: 10 } },
    };
    expect(parsePolicy(parts)).toEqual(parts);
  });

  it('throws 400 invalid_policy with details naming each failing field', () => {
    const err = rejection({ limits: { usd: { per_transaction_cents: -1 } }, spend_caps: [{ window: 'hourly', currency: 'USD', amount_cents: 1.5 }] });
    expect(err).toMatchObject({ code: 'invalid_policy', status: 400 });
    expect(err.details).toEqual(
      expect.arrayContaining([
        { field: 'limits.usd', message: '"usd" is not an ISO 4217 currency code' },
        { field: 'limits.usd.per_transaction_cents', message: 'must be positive' },
        { field: 'spend_caps.0.window', message: 'must be daily, weekly or monthly' },
        { field: 'spend_caps.0.amount_cents', message: 'must be an integer number of minor units' },
      ]),
    );
  });

  it('needs ISO 4217 currencies in limits and spend caps', () => {
    expect(fields({ limits: { XYZ: {} } })).toEqual(['limits.XYZ']);
    expect(fields({ limits: { XAU: {} } })).toEqual(['limits.XAU']);
    expect(fields({ spend_caps: [{ window: 'daily', currency: 'ABC', amount_cents: 1 }] })).toEqual(['spend_caps.0.currency']);
  });

  it('needs positive integer amounts; a review threshold may be 0 but not above the per-transaction limit', () => {
    for (const bad of [0, -1, 1.5, '100', null, 2 ** 60]) {
      expect(fields({ limits: { USD: { per_transaction_cents: bad } } })).toEqual(['limits.USD.per_transaction_cents']);
      expect(fields({ spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: bad }] })).toEqual(['spend_caps.0.amount_cents']);
      expect(fields({ agents: { a: { per_transaction_cents: bad } } })).toEqual(['agents.a.per_transaction_cents']);
    }
    for (const bad of [-1, 0.5, '1', null]) expect(fields({ limits: { USD: { review_above_cents: bad } } })).toEqual(['limits.USD.review_above_cents']);
    expect(details({ limits: { USD: { per_transaction_cents: 100, review_above_cents: 101 } } })).toEqual([
      { field: 'limits.USD.review_above_cents', message: 'must not be above per_transaction_cents' },
    ]);
    expect(fields({ agents: { a: { per_transaction_cents: 100, review_above_cents: 200 } } })).toEqual(['agents.a.review_above_cents']);
    expect(parsePolicy({ limits: { USD: { per_transaction_cents: 100, review_above_cents: 100 } } })).toBeTruthy();
  });

  it('refuses unknown fields at every level', () => {
    expect(fields({ limit: {} })).toEqual(['limit']);
    expect(fields({ limits: { USD: { per_transaction: 1 } } })).toEqual(['limits.USD.per_transaction']);
    expect(fields({ spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 1, rolling: true }] })).toEqual(['spend_caps.0.rolling']);
    expect(fields({ merchants: { denied: [] } })).toEqual(['merchants.denied']);
    expect(fields({ purposes: { forbidden: [] } })).toEqual(['purposes.forbidden']);
    expect(fields({ agents: { a: { daily_cents: 1 } } })).toEqual(['agents.a.daily_cents']);
  });

  it('checks the shapes of every part', () => {
    for (const [bad, field] of [
      [{ limits: [] }, 'limits'],
      [{ limits: { USD: 5 } }, 'limits.USD'],
      [{ spend_caps: {} }, 'spend_caps'],
      [{ spend_caps: [5] }, 'spend_caps.0'],
      [{ merchants: [] }, 'merchants'],
      [{ merchants: { blocked: 'm_bad' } }, 'merchants.blocked'],
      [{ merchants: { blocked: ['bad merchant'] } }, 'merchants.blocked.0'],
      [{ merchants: { allowed: ['ok', ''] } }, 'merchants.allowed.1'],
      [{ purposes: { permitted: ['travel', 'air travel'] } }, 'purposes.permitted.1'],
      [{ purposes: { permitted: null } }, 'purposes.permitted'],
      [{ agents: { ' padded': {} } }, 'agents. padded'],
      [{ agents: { 'a\nb': {} } }, 'agents.a\nb'],
      [{ agents: { a: null } }, 'agents.a'],
    ] as Array<[unknown, string]>) {
      expect([bad, fields(bad)]).toEqual([bad, [field]]);
    }
    for (const notObject of [null, undefined, [], 'policy', 5]) expect(fields(notObject)).toEqual(['']);
  });

  it('review.approvals_required is 1 or 2; anything else is refused by name', () => {
    expect(parsePolicy({ review: { approvals_required: 2 } })).toEqual({ review: { approvals_required: 2 } });
    expect(parsePolicy({ review: { approvals_required: 1, require_distinct_reviewer: true } })).toEqual({ review: { approvals_required: 1, require_distinct_reviewer: true } });
    for (const bad of [0, 3, 1.5, -1, '2', null, true, [2]]) {
      expect([bad, details({ review: { approvals_required: bad } })]).toEqual([bad, [{ field: 'review.approvals_required', message: 'must be 1 or 2 (the number of distinct reviewers who must approve)' }]]);
    }
    expect(fields({ review: { approvals: 2 } })).toEqual(['review.approvals']);
  });

  it('allows at most one spend cap per window and currency', () => {
    const cap = { window: 'daily', currency: 'USD', amount_cents: 1 };
    expect(details({ spend_caps: [cap, { ...cap, currency: 'EUR' }, { ...cap, amount_cents: 5 }] })).toEqual([
      { field: 'spend_caps.2', message: 'repeats the daily USD cap of spend_caps.0' },
    ]);
  });

  it(`caps lists at ${MAX_POLICY_LIST} entries`, () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `m_${i}`);
    expect(parsePolicy({ merchants: { blocked: ids(MAX_POLICY_LIST), allowed: ids(MAX_POLICY_LIST) } })).toBeTruthy();
    expect(fields({ merchants: { blocked: ids(MAX_POLICY_LIST + 1) } })).toEqual(['merchants.blocked']);
    expect(fields({ merchants: { allowed: ids(MAX_POLICY_LIST + 1) } })).toEqual(['merchants.allowed']);
    expect(fields({ purposes: { permitted: ids(MAX_POLICY_LIST + 1) } })).toEqual(['purposes.permitted']);
    expect(fields({ agents: Object.fromEntries(ids(MAX_POLICY_LIST + 1).map((id) => [id, {}])) })).toEqual(['agents']);
    const caps = Array.from({ length: 101 }, () => ({ window: 'daily', currency: 'USD', amount_cents: 1 }));
    expect(fields({ spend_caps: caps })).toContain('spend_caps');
  });

  it('hashes the JCS form: key order and whitespace do not change the hash, content does', () => {
    const p = designExample();
    const jcs = '{"agents":{"agent-7":{"per_transaction_cents":1000}},"limits":{"USD":{"per_transaction_cents":50000,"review_above_cents":20000}},"merchants":{"allowed":null,"blocked":["m_bad"]},"purposes":{"permitted":["travel","software"]},"spend_caps":[{"amount_cents":100000,"currency":"USD","window":"daily"}]}';
    expect(policyHash(p)).toBe(createHash('sha256').update(jcs).digest('hex'));
    expect(policyHash(p)).toMatch(/^[0-9a-f]{64}$/);
    const reordered = JSON.parse(JSON.stringify({ spend_caps: p.spend_caps, purposes: p.purposes, merchants: p.merchants, limits: p.limits, agents: p.agents }, null, 2));
    expect(policyHash(parsePolicy(reordered))).toBe(policyHash(p));
    expect(policyHash({ ...p, purposes: { permitted: ['software', 'travel'] } })).not.toBe(policyHash(p));
    expect(policyHash({})).toBe(createHash('sha256').update('{}').digest('hex'));
  });

  it('recognizes policy ids: 1..64 of letters, digits, _ and -', () => {
    for (const ok of ['default', 'a', 'Travel_2026-Q4', 'x'.repeat(64)]) expect(isPolicyId(ok)).toBe(true);
    for (const bad of ['', 'x'.repeat(65), 'a.b', 'a b', 'a/b', 'ü', '..', 5, null]) expect(isPolicyId(bad)).toBe(false);
  });
});
