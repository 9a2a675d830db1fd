import { AppError } from '@app/core';
import { EventStore, RecordedEvent } from '@app/event-store';
import { decodePageCursor, encodePageCursor } from '@app/http';
import type { AuthorizationRequest } from '../domain/authorization-request';
import { evaluatePolicy, Evaluation } from '../domain/evaluate';
import { statusesEntered, TransactionStatus } from '../domain/lifecycle';
import { policyHash, PolicyDocument } from '../domain/policy';
import { checkTimelineAnchor } from '../domain/timeline-anchor';
import type { RecordVerifier } from '../receipts/record-verifier';
import { SignedRecord, verifyRecord } from '../receipts/signed-record';
import type { AuthorizationDecided, AuthorizationRequested } from './transaction.events';
import { transactionStream } from './transaction.events';
import type { TransactionRow } from './transaction-row';
import { TransactionPageFilter, TransactionRows } from './transaction-rows.repository';

export interface PolicyVersionLookup {
  version(orgId: string, policyId: string, version: number): Promise<{ policy: PolicyDocument; policy_hash: string; version: number } | null>;
}

/** The listing's filters as the API takes them: the read model's, with the cursor still opaque. */
export type TransactionFilter = Omit<TransactionPageFilter, 'cursor'> & { cursor?: string };

const iso = (v: Date | string | null) => (v === null ? null : v instanceof Date ? v.toISOString() : new Date(v).toISOString());

/** The public view of a transaction (its current state). */
export function transactionView(row: TransactionRow) {
  return {
    transaction_id: row.transaction_id,
    authorization_id: row.authorization_id,
    status: row.status,
    decision: row.decision,
    reason_code: row.reason_code,
    amount_cents: Number(row.amount_cents),
    approved_amount_cents: row.approved_amount_cents === null ? null : Number(row.approved_amount_cents),
    currency: row.currency,
    merchant_id: row.merchant_id,
    purpose_tag: row.purpose_tag,
    delegated_authority: row.delegated_authority,
    policy_id: row.policy_id,
    policy_version: row.policy_version,
    policy_hash: row.policy_hash,
    mode: row.mode,
    provider: row.provider,
    provider_reference: row.provider_reference,
    execution: { state: row.execution_state, attempts: row.execution_attempts, last_attempt_at: iso(row.last_attempt_at) },
    expires_at: iso(row.expires_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** `api_key:key_x` → {type: 'api_key', id: 'key_x'}. */
export function actorOf(actor: unknown): { type: string; id: string } {
  const text = typeof actor === 'string' ? actor : 'unknown';
  const at = text.indexOf(':');
  return at < 0 ? { type: 'unknown', id: text } : { type: text.slice(0, at), id: text.slice(at + 1) };
}

/**
 * One timeline entry: the stored event (every field its hash covers) plus readable fields.
 * `status` is the status the event records (after it); `entered` the statuses it moved the
 * transaction into from `previousStatus` (the status before it), so `initiated`, which
 * authorization.requested passes through on its way to `evaluating`, shows too.
 */
export function timelineEntry(e: RecordedEvent, previousStatus: TransactionStatus | null = null) {
  const { transaction_id: _t, organization_id: _o, status, ...details } = e.data as Record<string, unknown>;
  return {
    event_id: e.event_id,
    event_type: e.type,
    sequence: e.revision + 1,
    timestamp: e.recorded_at,
    actor: actorOf(e.metadata.actor),
    status,
    entered: typeof status === 'string' ? statusesEntered(previousStatus, e.type, status as TransactionStatus) : [],
    metadata: details,
    hash: e.hash,
    prev_hash: e.prev_hash,
    stored: { event_id: e.event_id, stream_id: e.stream_id, revision: e.revision, type: e.type, data: e.data, metadata: e.metadata, recorded_at: e.recorded_at, prev_hash: e.prev_hash, hash: e.hash },
  };
}

/** A stream's events as timeline entries, each knowing the status before it. */
export function timelineEntries(events: readonly RecordedEvent[]) {
  let previous: TransactionStatus | null = null;
  return events.map((e) => {
    const entry = timelineEntry(e, previous);
    if (typeof entry.status === 'string') previous = entry.status as TransactionStatus;
    return entry;
  });
}

/** Reads of the transactions: state, lists, timelines with their chain verdict, replays, records. */
export class TransactionQueries {
  constructor(
    private readonly rows: TransactionRows,
    private readonly store: EventStore,
    private readonly policies: PolicyVersionLookup,
    private readonly verifier: RecordVerifier,
  ) {}

  async list(orgId: string, f: TransactionFilter) {
    const rows = await this.rows.page(orgId, { ...f, cursor: f.cursor ? decodePageCursor(f.cursor) : undefined });
    const page = rows.slice(0, f.limit);
    const last = page[page.length - 1];
    return {
      items: page.map(transactionView),
      next_cursor: rows.length > f.limit && last ? encodePageCursor(last.created_at, last.transaction_id) : null,
    };
  }

  /**
   * The timeline with its verdict: `chain_valid` holds when every link holds and its end is sound
   * (`anchor`): a terminal timeline ends with its valid anchor, and the stream is as long as the
   * read model recorded it (so events cut off the end show, anchor and terminal event included).
   * `anchor.state` is `pending` when the timeline is terminal and no anchor was ever written (the
   * controller anchors it then and reads again).
   */
  async events(orgId: string, transactionId: string) {
    const row = await this.owned(orgId, transactionId);
    const stream = transactionStream(transactionId);
    const [events, verdict] = await Promise.all([this.store.readStream(stream), this.store.verifyStream(stream)]);
    const readModel = { status: row.status, revision: Number(row.revision), anchored_revision: row.anchored_revision ?? null };
    const checked = checkTimelineAnchor(events, (record) => verifyRecord(record, this.verifier.check), readModel);
    const pending = checked.state === 'missing' && readModel.anchored_revision === null && readModel.revision === events.length - 1;
    const anchor = pending ? { ...checked, state: 'pending' as const } : checked;
    return { transaction_id: transactionId, chain_valid: verdict.valid && anchor.valid, chain: verdict, anchor, events: timelineEntries(events) };
  }

  /**
   * Re-evaluates the recorded request against the exact policy version that decided it, at the
   * recorded instant and with the recorded spend, and says whether the decision is reproduced.
   */
  async replay(orgId: string, transactionId: string) {
    await this.owned(orgId, transactionId);
    return this.replayRecorded(orgId, transactionId, (policyId, version) => this.policies.version(orgId, policyId, version));
  }

  /**
   * The replays of a page of the organization's transactions (the console's approvals queue):
   * one stream read each, and each policy version read once for the lot rather than once per
   * transaction (a page of 25 escalations under one policy version: 26 reads, not 75). A
   * transaction of another organization, or one whose replay fails, is null.
   */
  async replayMany(orgId: string, transactionIds: string[]) {
    const versions = new Map<string, ReturnType<PolicyVersionLookup['version']>>();
    const lookup = (policyId: string, version: number) => {
      const key = `${policyId}\u0000${version}`;
      let found = versions.get(key);
      if (!found) versions.set(key, (found = this.policies.version(orgId, policyId, version)));
      return found;
    };
    return Promise.all(transactionIds.map((id) => this.replayRecorded(orgId, id, lookup).catch(() => null)));
  }

  private async replayRecorded(orgId: string, transactionId: string, policyVersion: (policyId: string, version: number) => ReturnType<PolicyVersionLookup['version']>) {
    const [requested, decided] = await this.store.readStream(transactionStream(transactionId), { limit: 2 });
    const req = requested?.data as AuthorizationRequested | undefined;
    // The stream's own record of its organization: replayMany's callers did not check it against the read model.
    if (!req || !decided || req.organization_id !== orgId) throw new AppError('not_found', `transaction ${transactionId} not found`, 404);
    const dec = decided.data as AuthorizationDecided;
    const version = req.policy_version === null ? null : await policyVersion(req.policy_id, req.policy_version);
    const spent = new Map(dec.spend.map((s) => [s.cap_key, s.spent_before_cents]));
    const replayed: Evaluation = evaluatePolicy(version?.policy ?? null, req.request as AuthorizationRequest, {
      now: new Date(dec.evaluated_at),
      spent: (w) => spent.get(w.key) ?? 0,
    });
    const recomputedHash = version ? policyHash(version.policy) : null;
    return {
      transaction_id: transactionId,
      policy_id: req.policy_id,
      policy_version: req.policy_version,
      policy_hash: req.policy_hash,
      policy_hash_matches: recomputedHash === req.policy_hash,
      evaluated_at: dec.evaluated_at,
      recorded: { decision: dec.decision, reason_code: dec.reason_code },
      replayed: { decision: replayed.decision, reason_code: replayed.reason_code, checks: replayed.checks },
      reproduced: replayed.decision === dec.decision && replayed.reason_code === dec.reason_code && recomputedHash === req.policy_hash,
    };
  }

  /**
   * The signed record of the policy's decision (payment_decision.v1), for blocked decisions too,
   * with every person's signed review of it (payment_review.v1) in timeline order.
   */
  async decisionRecord(orgId: string, transactionId: string): Promise<SignedRecord & { reviews: SignedRecord[] }> {
    await this.owned(orgId, transactionId);
    const [, decided, ...rest] = await this.store.readStream(transactionStream(transactionId));
    const reviews = rest.map((e) => (e.data as { review_record?: SignedRecord }).review_record).filter((r): r is SignedRecord => r !== undefined);
    return { ...(decided.data as AuthorizationDecided).decision_record, reviews };
  }

  async receipt(orgId: string, transactionId: string): Promise<SignedRecord> {
    const row = await this.owned(orgId, transactionId);
    if (row.status !== 'receipt_issued') {
      throw new AppError('receipt_not_available', `transaction ${transactionId} is ${row.status}; a receipt exists once it has executed (its decision record is at /api/cdp/transactions/${transactionId}/decision)`, 404, { status: row.status });
    }
    // The last event, or the one before the anchor that follows it.
    const tail = await this.store.readStream(transactionStream(transactionId), { direction: 'backwards', limit: 2 });
    return (tail.find((e) => e.type === 'receipt.issued')!.data as { receipt: SignedRecord }).receipt;
  }

  private async owned(orgId: string, transactionId: string): Promise<TransactionRow> {
    const row = await this.rows.byId(orgId, transactionId);
    if (!row) throw new AppError('not_found', `transaction ${transactionId} not found`, 404);
    return row;
  }
}
