import { eventFact, increment, InlineProjection, Json, ProjectedEvent, RowChange } from '@app/event-store';
import { notRevokedSigningKey } from '@app/notary';
import { LIFECYCLE_EVENT_TYPES } from '../domain/lifecycle';
import { APPROVAL_RECORDED } from '../domain/transaction.aggregate';
import { TIMELINE_ANCHORED } from '../domain/timeline-anchor';
import type { AuthorizationDecided, AuthorizationRequested, ExecutionFailed, ExecutionInitiated, ExecutionSucceeded, Reservation, SpendSnapshot } from './transaction.events';

/** The CHECK constraint of commerce_spend (migration commerce_003): no reservation past its cap. */
export const SPEND_CAP_CONSTRAINT = 'commerce_spend_within_cap';

/** The guard that no record signed by a revoked key is recorded (the notary's notRevokedSigningKey). */
export const SIGNING_KEY_GUARD = 'commerce_signing_key_not_revoked';

/** Where each event that carries a record signed by the service key keeps it (one per event). */
const SIGNED_RECORD_FIELD: Readonly<Record<string, string>> = {
  'authorization.approved': 'decision_record',
  'authorization.escalated': 'decision_record',
  [APPROVAL_RECORDED]: 'review_record',
  'authorization.human_approved': 'review_record',
  'receipt.issued': 'receipt',
  [TIMELINE_ANCHORED]: 'anchor',
};

/**
 * The key that signed the event's record, or null when it carries none: a policy's rejection
 * carries its decision record, a reviewer's its review, an expiry nothing.
 */
export function signingKeyOf(e: Pick<ProjectedEvent, 'type' | 'data'>): string | null {
  const d = (e.data ?? {}) as Record<string, { signature?: { key_id?: unknown } } | undefined>;
  const field = e.type === 'authorization.rejected' ? (d.decision_record ? 'decision_record' : 'review_record') : SIGNED_RECORD_FIELD[e.type];
  const keyId = field ? d[field]?.signature?.key_id : undefined;
  return typeof keyId === 'string' ? keyId : null;
}

/**
 * The transactions read model and the spend held per cap window, one projection of the
 * transaction streams written with each append (single or group commit), so the table never
 * disagrees with the stream. Spend is a counter per cap window: decisions reserve, rejections and
 * lowered approvals release.
 */
export const transactionsProjection: InlineProjection = {
  name: 'commerce_transactions',
  filter: { eventTypes: [...LIFECYCLE_EVENT_TYPES, APPROVAL_RECORDED, TIMELINE_ANCHORED], streamPrefix: 'transaction-' },
  tables: ['commerce_transactions', 'commerce_spend'],
  checks: [
    { name: SPEND_CAP_CONSTRAINT, table: 'commerce_spend', holds: (row) => row.cap_cents === null || row.cap_cents === undefined || Number(row.reserved_cents) <= Number(row.cap_cents) },
  ],
  guards: [notRevokedSigningKey(SIGNING_KEY_GUARD, signingKeyOf)],
  apply(e): RowChange[] {
    const d = e.data as { transaction_id: string; organization_id: string; status: string };
    const key = { transaction_id: d.transaction_id };
    const touched = { revision: eventFact('revision'), updated_at: e.recorded_at };
    switch (e.type) {
      case 'authorization.requested': {
        const r = e.data as AuthorizationRequested;
        const row = {
          transaction_id: r.transaction_id, authorization_id: r.authorization_id, organization_id: r.organization_id, status: r.status, decision: 'pending',
          policy_id: r.policy_id, policy_version: r.policy_version, policy_hash: r.policy_hash, amount_cents: r.request.amount_cents, currency: r.request.currency,
          merchant_id: r.request.merchant_id, purpose_tag: r.request.purpose_tag, delegated_authority: r.request.delegated_authority ?? null,
          expires_at: r.request.expiration_iso, mode: r.mode, provider: r.provider, reservations: [], created_at: e.recorded_at, ...touched,
        };
        return [{ op: 'insert', table: 'commerce_transactions', key: ['transaction_id'], row }];
      }
      case 'authorization.approved':
      case 'authorization.escalated':
      case 'authorization.rejected': {
        const x = e.data as AuthorizationDecided & { released?: Reservation[] };
        const set: Record<string, Json | ReturnType<typeof eventFact>> = { status: d.status, decision: x.decision, reason_code: x.reason_code ?? null, ...touched };
        if (x.reservations) set.reservations = x.reservations as unknown as Json;
        else if (x.released) set.reservations = [];
        return [
          { op: 'update', table: 'commerce_transactions', key, set },
          ...reserve(d.organization_id, x.reservations ?? [], x.spend ?? []),
          ...release(d.organization_id, x.released ?? []),
        ];
      }
      case 'authorization.human_approved': {
        // The reservations stay as decided; the approved amount says what of them is held.
        const x = e.data as { amount_cents: number; released: Reservation[] };
        return [
          { op: 'update', table: 'commerce_transactions', key, set: { status: d.status, decision: 'authorized', reason_code: null, approved_amount_cents: x.amount_cents, ...touched } },
          ...release(d.organization_id, x.released),
        ];
      }
      case APPROVAL_RECORDED:
        // A first approval of two: still needs_review, nothing reserved or released yet.
        return [{ op: 'update', table: 'commerce_transactions', key, set: touched }];
      case 'execution.initiated': {
        const x = e.data as ExecutionInitiated;
        return [{ op: 'update', table: 'commerce_transactions', key, set: { execution_state: 'settling', execution_attempts: x.attempt, last_attempt_at: e.recorded_at, ...touched } }];
      }
      case 'execution.failed': {
        const x = e.data as ExecutionFailed;
        return [{ op: 'update', table: 'commerce_transactions', key, set: { status: d.status, execution_state: x.retryable ? 'failed' : 'declined', ...touched } }];
      }
      case 'execution.succeeded': {
        const x = e.data as ExecutionSucceeded;
        return [{ op: 'update', table: 'commerce_transactions', key, set: { status: d.status, execution_state: 'succeeded', provider_reference: x.provider_reference, ...touched } }];
      }
      case 'receipt.issued':
        return [{ op: 'update', table: 'commerce_transactions', key, set: { status: d.status, ...touched } }];
      case TIMELINE_ANCHORED:
        // The anchor ends the stream: its revision is the last, and the timeline is sealed (not a state change).
        return [{ op: 'update', table: 'commerce_transactions', key, set: { revision: eventFact('revision'), anchored_revision: eventFact('revision') } }];
      default:
        return [];
    }
  },
};

/**
 * Amounts reserved on the organization's cap windows, each under the limit its decision saw: the
 * row keeps that limit, and the table's CHECK refuses the append when the reserved total passes
 * it (a concurrent decision got there first). Decisions recorded before limits rode along have
 * none (null: nothing to check, as before).
 */
const reserve = (orgId: string, items: Reservation[], spend: SpendSnapshot[]): RowChange[] =>
  items.map((r) => ({
    op: 'insert',
    table: 'commerce_spend',
    key: ['organization_id', 'cap_key'],
    row: { organization_id: orgId, cap_key: r.cap_key, reserved_cents: increment(r.amount_cents), cap_cents: spend.find((s) => s.cap_key === r.cap_key)?.limit_cents ?? null },
    onConflict: { update: ['reserved_cents', 'cap_cents'] },
  }));

/** Amounts released (rejection, expiry, a lower approval): a release only lowers the total, so the check always holds. */
const release = (orgId: string, items: Reservation[]): RowChange[] =>
  items.map((r) => ({
    op: 'insert',
    table: 'commerce_spend',
    key: ['organization_id', 'cap_key'],
    row: { organization_id: orgId, cap_key: r.cap_key, reserved_cents: increment(-r.amount_cents) },
    onConflict: { update: ['reserved_cents'] },
  }));
