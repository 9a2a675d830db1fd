import { generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { fixedClock } from '@app/core';
import { InMemoryEventStore } from '@app/event-store';
import { transactionsProjection } from './transaction.projection';
import { TransactionRepository } from './transaction.repository';
import { ReviewRules } from './review-rules';
import type { PolicyDocument } from '../domain/policy';
import { TransactionRows } from './transaction-rows.repository';
import type { TransactionRow } from './transaction-row';

const hex = (n: number) => randomBytes(n).toString('hex');

/** Specs: the transactions read model as the in-memory store's projection keeps it. */
class InMemoryTransactionRows extends TransactionRows {
  constructor(private readonly store: InMemoryEventStore) {
    super();
  }
  private all = () => this.store.rows('commerce_transactions') as unknown as TransactionRow[];
  async byId(org: string, id: string) {
    return this.all().find((r) => r.organization_id === org && r.transaction_id === id) ?? null;
  }
  async byAuthorization(org: string, id: string) {
    return this.all().find((r) => r.organization_id === org && r.authorization_id === id) ?? null;
  }
  async page(org: string, f: { status?: string; limit: number }) {
    return this.all()
      .filter((r) => r.organization_id === org && (!f.status || r.status === f.status))
      .slice(0, f.limit + 1);
  }
  async dueForAnchor(afterId: string, limit: number) {
    return this.all()
      .filter((r) => (r.anchored_revision ?? null) === null && ['rejected', 'declined', 'expired', 'receipt_issued'].includes(r.status) && r.transaction_id > afterId)
      .sort((a, b) => a.transaction_id.localeCompare(b.transaction_id))
      .slice(0, limit);
  }
  async dueForExpiry(now: Date, limit: number) {
    return this.all()
      .filter((r) => (r.status === 'needs_review' || (r.status === 'authorized' && r.execution_state !== 'settling')) && Date.parse(String(r.expires_at)) <= now.getTime())
      .slice(0, limit);
  }
}

const authorityKeys = generateKeyPairSync('ed25519');
/** The service's signing authority in specs (key-1), and a check of its signatures for verifyRecord. */
export const specAuthority = { issuer: 'sigil.test', liveProvider: false, sign: (m: Uint8Array) => ({ key_id: 'key-1', signature: sign(null, m, authorityKeys.privateKey) }), refresh: async () => undefined };
export const specSignatureCheck = (keyId: string, message: Uint8Array, signature: Uint8Array) =>
  keyId === 'key-1' && verify(null, message, authorityKeys.publicKey, signature) ? { valid: true as const } : { valid: false as const, reason: 'signature_invalid' as const };

/** An in-memory commerce world: the store with the transactions projection, its rows, a fixed clock. */
export function commerceWorld(at = '2026-11-25T10:00:00.000Z') {
  const clock = fixedClock(at);
  const store = new InMemoryEventStore(() => clock.now());
  store.registerProjection(transactionsProjection);
  const rows = new InMemoryTransactionRows(store);
  // Terminal timelines are anchored as in the api role: signed by the spec authority.
  const transactions = new TransactionRepository(store, { issuer: specAuthority.issuer, sign: specAuthority.sign, clock, refresh: async () => undefined });
  /** The policy versions review rules read (`org/policy/version`), and who holds which key. */
  const policyVersions = new Map<string, PolicyDocument>();
  const keyOwners = new Map<string, string>();
  /** Who created which key (`created_by`: a key id, `user:<id>`, `operator`). */
  const keyCreators = new Map<string, string>();
  const rules = new ReviewRules({
    policyVersion: async (org, id, v) => (policyVersions.has(`${org}/${id}/${v}`) ? { policy: policyVersions.get(`${org}/${id}/${v}`)! } : null),
    key: async (_org, keyId) => ({ owner: keyOwners.get(keyId) ?? null, createdBy: keyCreators.get(keyId) ?? null }),
  });
  /** An authorization escalated to review, holding `amount` on one daily cap window. */
  const escalated = async (org: string, amount = 30_000, expiresAt = '2026-11-26T00:00:00.000Z') => {
    const ids = { transaction_id: `txn_${hex(16)}`, authorization_id: `auth_${hex(16)}`, organization_id: org };
    const policy = { policy_id: 'default', policy_hash: `sha256:${'ab'.repeat(32)}` };
    const reservations = [{ cap_key: 'daily:USD:2026-11-25', amount_cents: amount }];
    const meta = { actor: 'api_key:key_agent', correlation_id: ids.transaction_id };
    await transactions.saveNew(ids.transaction_id, [
      {
        type: 'authorization.requested',
        data: { ...ids, status: 'evaluating', ...policy, policy_version: 1, mode: 'test', provider: 'sandbox',
          request: { amount_cents: amount, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: expiresAt } },
        metadata: meta,
      },
      {
        type: 'authorization.escalated',
        data: { ...ids, status: 'needs_review', decision: 'needs_review', reason_code: 'REVIEW_REQUIRED', ...policy, evaluated_at: at, spend: [{ cap_key: 'daily:USD:2026-11-25', limit_cents: 100_000, spent_before_cents: 0 }], reservations },
        metadata: meta,
      },
    ]);
    return ids;
  };
  /** An authorization the policy approved at once, for `amount`. */
  const authorized = async (org: string, amount = 4_000, expiresAt = '2026-11-26T00:00:00.000Z') => {
    const ids = await escalated(org, amount, expiresAt);
    const row = (await rows.byId(org, ids.transaction_id))!;
    await transactions.save({ transaction_id: ids.transaction_id, revision: Number(row.revision) }, [
      { type: 'authorization.human_approved', data: { ...ids, status: 'authorized', approver: 'api_key:key_reviewer', note: null, amount_cents: amount, released: [] }, metadata: { actor: 'api_key:key_reviewer', correlation_id: ids.transaction_id } },
    ]);
    return ids;
  };
  return { clock, store, rows, transactions, escalated, authorized, authority: specAuthority, rules, policyVersions, keyOwners, keyCreators, deps: { rows, transactions, clock, authority: specAuthority, rules } };
}
