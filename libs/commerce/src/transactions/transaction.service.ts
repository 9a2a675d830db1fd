import { AppError, newPrefixedId } from '@app/core';
import { RecordedEvent, SqlDatabase, SqlEventStore, SqlExecutor, WrongExpectedVersion } from '@app/event-store';
import type { LookupResult, SettlementProvider, SettleOutcome } from '@app/settlement';
import type { AuthorizationRequest } from '../domain/authorization-request';
import { capWindows, CapWindow, evaluatePolicy, Evaluation } from '../domain/evaluate';
import { nextStatus, TransactionStatus } from '../domain/lifecycle';
import type { PolicyDocument } from '../domain/policy';
import { DECISION_SCHEMA, RECEIPT_SCHEMA, SignedRecord, signRecord, Signer } from '../receipts/signed-record';
import { applyTransactionEvent, decidedTransactionRow, reserveSpend } from './transaction.projection';
import { AuthorizationDecided, AuthorizationRequested, KeyMode, Reservation, SpendSnapshot, transactionStream } from './transaction.events';

/** The policy version an authorization is evaluated against. */
export interface PolicyVersionView {
  policy_id: string;
  version: number;
  policy: PolicyDocument;
  policy_hash: string;
  created_at: string;
}

export interface PolicyLookup {
  current(organizationId: string, policyId: string): Promise<PolicyVersionView | null>;
}

export interface Actor {
  organizationId: string;
  /** `api_key:<key_id>` or `system:<component>`. */
  actor: string;
  mode: KeyMode;
}

export interface AuthorizationDecisionView {
  authorization_id: string;
  transaction_id: string;
  decision: Evaluation['decision'];
  policy_id: string;
  policy_hash: string | null;
  reason_code: string | null;
  status: TransactionStatus;
  created_at: string;
  expires_at: string;
}

/** One row of the transactions read model. */
export interface TransactionRow {
  transaction_id: string;
  authorization_id: string;
  organization_id: string;
  status: TransactionStatus;
  decision: string;
  reason_code: string | null;
  policy_id: string;
  policy_version: number | null;
  policy_hash: string | null;
  amount_cents: string | number;
  approved_amount_cents: string | number | null;
  currency: string;
  merchant_id: string;
  purpose_tag: string;
  delegated_authority: string | null;
  expires_at: Date | string;
  mode: KeyMode;
  provider: string;
  provider_reference: string | null;
  execution_state: 'settling' | 'failed' | 'declined' | 'succeeded' | null;
  execution_attempts: number;
  last_attempt_at: Date | string | null;
  reservations: Reservation[];
  revision: number;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The providers payments settle through, by name. `cdp_test_` keys settle only on `sandbox`. */
export interface ProviderDirectory {
  sandbox: SettlementProvider;
  /** The provider live keys settle through; none configured means live payments cannot execute. */
  live?: SettlementProvider;
}

export interface ExecutionResult {
  outcome: 'succeeded' | 'declined' | 'failed' | 'already_executed';
  transaction: TransactionRow;
  receipt?: SignedRecord;
  error_code?: string;
  retryable?: boolean;
}

/** An attempt that reported nothing back for this long is reconciled with the provider before a retry. */
export const SETTLING_LEASE_MS = 30_000;

const iso = (v: Date | string) => (v instanceof Date ? v.toISOString() : new Date(v).toISOString());

/**
 * The Transaction aggregate's commands. Each transition is checked against the lifecycle table,
 * appended to the transaction's stream with the expected revision (so two racing decisions
 * produce exactly one outcome), and applied to the read model in the same database transaction.
 */
export class TransactionService {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly policies: PolicyLookup,
    private readonly providers: ProviderDirectory,
    private readonly signer: () => Signer,
    private readonly issuer: string,
    private readonly now: () => Date = () => new Date(),
    private readonly expiry = new AuthorizationExpiry(db, store, now),
  ) {}

  /**
   * Evaluates a payment authorization and records it: authorization.requested plus the decision,
   * in one append. Spend caps are checked and reserved under row locks on the cap windows, so
   * concurrent requests can never overshoot a cap.
   */
  async authorize(actor: Actor, request: AuthorizationRequest): Promise<AuthorizationDecisionView> {
    const policyId = request.policy_id ?? 'default';
    const policy = await this.policies.current(actor.organizationId, policyId);
    const transactionId = newPrefixedId('txn');
    const authorizationId = newPrefixedId('auth');
    const providerName = actor.mode === 'test' ? 'sandbox' : this.providers.live ? 'live' : 'unconfigured';
    const base = { transaction_id: transactionId, authorization_id: authorizationId, organization_id: actor.organizationId };

    const decide = async (tx: SqlExecutor | null, now: Date, windows: CapWindow[], spent: Map<string, number>): Promise<AuthorizationDecisionView> => {
      const evaluation = evaluatePolicy(policy?.policy ?? null, request, { now, spent: (w) => spent.get(w.key) ?? 0 });
      const holds = evaluation.decision !== 'blocked';
      const reservations: Reservation[] = holds ? windows.map((w) => ({ cap_key: w.key, amount_cents: request.amount_cents })) : [];
      const spend: SpendSnapshot[] = windows.map((w) => ({ cap_key: w.key, limit_cents: w.limit_cents, spent_before_cents: spent.get(w.key) ?? 0 }));
      const decidedType =
        evaluation.decision === 'authorized' ? 'authorization.approved' : evaluation.decision === 'needs_review' ? 'authorization.escalated' : 'authorization.rejected';
      const requestedStatus = nextStatus(null, 'authorization.requested');
      const decidedStatus = nextStatus(requestedStatus, decidedType);
      const policyHash = policy?.policy_hash ?? null;
      const decidedAt = now.toISOString();
      const decisionRecord = signRecord(
        DECISION_SCHEMA,
        {
          ...base,
          decision: evaluation.decision,
          reason_code: evaluation.reason_code,
          request: { ...request },
          policy_id: policyId,
          policy_version: policy?.version ?? null,
          policy_hash: policyHash,
          issuer: this.issuer,
          decided_at: decidedAt,
        },
        this.signer(),
      );
      const requested: AuthorizationRequested = {
        ...base,
        status: requestedStatus,
        request,
        policy_id: policyId,
        policy_version: policy?.version ?? null,
        policy_hash: policyHash,
        mode: actor.mode,
        provider: providerName,
      };
      const decided: AuthorizationDecided = {
        ...base,
        status: decidedStatus,
        decision: evaluation.decision,
        reason_code: evaluation.reason_code,
        policy_id: policyId,
        policy_hash: policyHash,
        evaluated_at: decidedAt,
        spend,
        reservations,
        decision_record: decisionRecord,
        ...(decidedType === 'authorization.rejected' ? { rejected_by: 'policy' as const } : {}),
      };
      const meta = { actor: actor.actor, correlation_id: transactionId };
      const events = [
        { type: 'authorization.requested', data: requested, metadata: meta },
        { type: decidedType, data: decided, metadata: meta },
      ];
      // The read-model row rides in the append's statement; without a cap to lock, that one
      // statement (autocommit) is the whole write.
      const followUp = decidedTransactionRow(requested, decided);
      const result = tx
        ? await this.store.appendIn(tx, transactionStream(transactionId), events, 'no_stream', followUp)
        : await this.store.append(transactionStream(transactionId), events, { expectedRevision: 'no_stream', followUp });
      if (tx) await reserveSpend(tx, actor.organizationId, reservations);
      return {
        authorization_id: authorizationId,
        transaction_id: transactionId,
        decision: evaluation.decision,
        policy_id: policyId,
        policy_hash: policyHash,
        reason_code: evaluation.reason_code,
        status: decidedStatus,
        created_at: result.events[0].recorded_at,
        expires_at: new Date(request.expiration_iso).toISOString(),
      };
    };

    const now = this.now();
    const expired = Date.parse(request.expiration_iso) <= now.getTime();
    const windows = policy && !expired ? capWindows(policy.policy, request.currency, now) : [];
    if (windows.length === 0) return decide(null, now, [], new Map());
    return this.db.transaction(async (tx) => decide(tx, now, windows, await lockSpend(tx, actor.organizationId, windows)));
  }

  /** A reviewer approves (optionally for a lower amount) or rejects an escalated authorization. */
  async review(
    organizationId: string,
    authorizationId: string,
    action: { kind: 'approve'; amount_cents?: number; note: string | null } | { kind: 'reject'; note: string | null },
    actor: string,
  ): Promise<TransactionRow> {
    const row = await this.rowByAuthorization(organizationId, authorizationId);
    if (row.status !== 'needs_review') {
      throw new AppError('authorization_not_pending', `authorization ${authorizationId} is ${row.status}, not awaiting review`, 409, { status: row.status });
    }
    if (Date.parse(iso(row.expires_at)) <= this.now().getTime()) {
      // The window closed before this decision: record the expiry (never as a human decision).
      await this.expiry.expire(row).catch((err) => {
        if (!(err instanceof WrongExpectedVersion)) throw err;
      });
      throw new AppError('authorization_expired', `the authorization window of ${authorizationId} closed at ${iso(row.expires_at)}`, 409);
    }
    const amount = Number(row.amount_cents);
    if (action.kind === 'approve' && action.amount_cents !== undefined && action.amount_cents > amount) {
      throw new AppError('approval_amount_exceeds_request', `an approval may lower the amount, not raise it above ${amount}`, 400, [{ field: 'amount_cents', message: `must be at most ${amount}` }]);
    }
    const base = { transaction_id: row.transaction_id, authorization_id: row.authorization_id, organization_id: organizationId };
    const event =
      action.kind === 'approve'
        ? (() => {
            const approved = action.amount_cents ?? amount;
            return {
              type: 'authorization.human_approved' as const,
              data: {
                ...base,
                status: nextStatus(row.status, 'authorization.human_approved'),
                approver: actor,
                note: action.note,
                amount_cents: approved,
                released: row.reservations.filter(() => approved < amount).map((r) => ({ cap_key: r.cap_key, amount_cents: amount - approved })),
              },
            };
          })()
        : {
            type: 'authorization.rejected' as const,
            data: {
              ...base,
              status: nextStatus(row.status, 'authorization.rejected'),
              decision: 'blocked',
              reason_code: 'REJECTED_BY_REVIEWER',
              rejected_by: 'human',
              approver: actor,
              note: action.note,
              released: row.reservations,
            },
          };
    try {
      await this.appendTransition(row, [{ ...event, metadata: { actor, correlation_id: row.transaction_id } }]);
    } catch (err) {
      if (err instanceof WrongExpectedVersion) {
        const now = await this.rowByAuthorization(organizationId, authorizationId);
        throw new AppError('authorization_not_pending', `authorization ${authorizationId} was decided concurrently; it is now ${now.status}`, 409, { status: now.status });
      }
      throw err;
    }
    return this.rowByAuthorization(organizationId, authorizationId);
  }

  /**
   * Settles an authorized transaction through its provider. The provider idempotency key is the
   * transaction id on every attempt, so a retry after a timeout can never settle twice; an
   * attempt whose outcome never came back is reconciled by asking the provider first.
   */
  async execute(organizationId: string, transactionId: string, actor: string): Promise<ExecutionResult> {
    let row = await this.row(organizationId, transactionId);
    if (row.status === 'executed' || row.status === 'receipt_issued') {
      return { outcome: 'already_executed', transaction: row, receipt: (await this.receiptOf(row)) ?? undefined };
    }
    if (row.status !== 'authorized') {
      throw new AppError('transaction_not_authorized', `transaction ${transactionId} is ${row.status}; only an authorized transaction executes`, 409, { status: row.status });
    }
    if (row.execution_state === 'declined') {
      throw new AppError('payment_declined', `the provider declined transaction ${transactionId}; a declined payment is not retried`, 409);
    }
    const provider = row.provider === 'sandbox' ? this.providers.sandbox : row.provider === 'live' ? this.providers.live : undefined;
    if (!provider) {
      throw new AppError('provider_unavailable', 'no live settlement provider is configured; live-mode payments cannot execute (test keys settle on the sandbox)', 409);
    }
    const key = transactionId;
    if (row.execution_state === 'settling') {
      const startedAt = row.last_attempt_at ? Date.parse(iso(row.last_attempt_at)) : 0;
      const known = await provider.lookup(key);
      if (known.outcome !== 'not_found') return this.recordOutcome(row, provider, row.execution_attempts, known, actor);
      if (this.now().getTime() - startedAt < SETTLING_LEASE_MS) {
        throw new AppError('execution_in_progress', `transaction ${transactionId} is being settled; retry shortly`, 409, undefined, { 'Retry-After': '2' });
      }
    }
    if (Date.parse(iso(row.expires_at)) <= this.now().getTime()) {
      throw new AppError('authorization_expired', `the authorization window of ${transactionId} closed at ${iso(row.expires_at)}`, 409);
    }
    const attempt = row.execution_attempts + 1;
    const amount = Number(row.approved_amount_cents ?? row.amount_cents);
    try {
      row = await this.appendTransition(row, [
        {
          type: 'execution.initiated',
          data: { ...this.baseOf(row), status: nextStatus(row.status, 'execution.initiated'), attempt, provider: row.provider, provider_idempotency_key: key, amount_cents: amount },
          metadata: { actor, correlation_id: transactionId },
        },
      ]);
    } catch (err) {
      if (err instanceof WrongExpectedVersion) throw new AppError('execution_in_progress', `transaction ${transactionId} changed concurrently; retry shortly`, 409, undefined, { 'Retry-After': '1' });
      throw err;
    }
    let outcome: SettleOutcome | LookupResult;
    try {
      outcome = await provider.settle({ idempotency_key: key, amount_cents: amount, currency: row.currency, merchant_id: row.merchant_id, reference: transactionId });
    } catch {
      outcome = { outcome: 'unknown' };
    }
    if (outcome.outcome === 'unknown') {
      // No answer in time: the provider may have settled it. Ask before recording anything.
      outcome = await provider.lookup(key).catch(() => ({ outcome: 'not_found' }) as const);
    }
    if (outcome.outcome === 'not_found') outcome = { outcome: 'failed', code: 'provider_outcome_unknown', retryable: true };
    return this.recordOutcome(row, provider, attempt, outcome, actor);
  }

  private async recordOutcome(
    row: TransactionRow,
    provider: SettlementProvider,
    attempt: number,
    outcome: Exclude<SettleOutcome, { outcome: 'unknown' }>,
    actor: string,
  ): Promise<ExecutionResult> {
    const base = this.baseOf(row);
    const meta = { actor, correlation_id: row.transaction_id };
    if (outcome.outcome !== 'succeeded') {
      const retryable = outcome.outcome === 'failed' && outcome.retryable;
      const errorCode = outcome.code;
      const updated = await this.appendTransition(row, [
        { type: 'execution.failed', data: { ...base, status: nextStatus(row.status, 'execution.failed'), attempt, provider: row.provider, error_code: errorCode, retryable }, metadata: meta },
      ]);
      return { outcome: outcome.outcome, transaction: updated, error_code: errorCode, retryable };
    }
    const amount = Number(row.approved_amount_cents ?? row.amount_cents);
    return this.db.transaction(async (tx) => {
      const succeeded = await this.store.appendIn(
        tx,
        transactionStream(row.transaction_id),
        [
          {
            type: 'execution.succeeded',
            data: { ...base, status: nextStatus(row.status, 'execution.succeeded'), attempt, provider: row.provider, provider_reference: outcome.provider_reference, amount_cents: amount },
            metadata: meta,
          },
        ],
        row.revision,
      );
      const last = succeeded.events[succeeded.events.length - 1];
      const receipt = signRecord(
        RECEIPT_SCHEMA,
        {
          transaction_id: row.transaction_id,
          authorization_id: row.authorization_id,
          organization_id: row.organization_id,
          amount_cents: amount,
          currency: row.currency,
          merchant_id: row.merchant_id,
          purpose_tag: row.purpose_tag,
          delegated_authority: row.delegated_authority,
          provider: provider.name,
          provider_reference: outcome.provider_reference,
          policy_id: row.policy_id,
          policy_hash: row.policy_hash,
          timeline_last_event_hash: last.hash,
          issuer: this.issuer,
          issued_at: this.now().toISOString(),
        },
        this.signer(),
      );
      const issued = await this.store.appendIn(
        tx,
        transactionStream(row.transaction_id),
        [
          {
            type: 'receipt.issued',
            data: { ...base, status: nextStatus('executed', 'receipt.issued'), receipt_hash: receipt.receipt_hash, key_id: receipt.signature.key_id, receipt },
            metadata: { actor: 'system:receipts', correlation_id: row.transaction_id },
          },
        ],
        last.revision,
      );
      for (const e of [...succeeded.events, ...issued.events]) await applyTransactionEvent(tx, e);
      const [updated] = await tx.query<TransactionRow>('SELECT * FROM commerce_transactions WHERE transaction_id = $1', [row.transaction_id]);
      return { outcome: 'succeeded' as const, transaction: updated, receipt };
    });
  }

  /** The transaction's signed receipt, once issued. */
  async receiptOf(row: Pick<TransactionRow, 'transaction_id' | 'status'>): Promise<SignedRecord | null> {
    if (row.status !== 'receipt_issued') return null;
    const events = await this.store.readStream(transactionStream(row.transaction_id), { direction: 'backwards', limit: 1 });
    const last = events[0];
    return last?.type === 'receipt.issued' ? (last.data as { receipt: SignedRecord }).receipt : null;
  }

  async row(organizationId: string, transactionId: string): Promise<TransactionRow> {
    const [row] = await this.db.query<TransactionRow>('SELECT * FROM commerce_transactions WHERE transaction_id = $1 AND organization_id = $2', [transactionId, organizationId], {
      name: 'commerce_tx_by_id',
    });
    if (!row) throw new AppError('not_found', `transaction ${transactionId} not found`, 404);
    return row;
  }

  async rowByAuthorization(organizationId: string, authorizationId: string): Promise<TransactionRow> {
    const [row] = await this.db.query<TransactionRow>('SELECT * FROM commerce_transactions WHERE authorization_id = $1 AND organization_id = $2', [
      authorizationId,
      organizationId,
    ]);
    if (!row) throw new AppError('not_found', `authorization ${authorizationId} not found`, 404);
    return row;
  }

  private baseOf(row: TransactionRow) {
    return { transaction_id: row.transaction_id, authorization_id: row.authorization_id, organization_id: row.organization_id };
  }

  private appendTransition(row: TransactionRow, events: TransitionEvent[]): Promise<TransactionRow> {
    return appendTransition(this.db, this.store, row, events);
  }
}

type TransitionEvent = { type: string; data: Record<string, unknown>; metadata: Record<string, string> };

/** Appends events at the row's revision and applies them, in one database transaction. */
async function appendTransition(db: SqlDatabase, store: SqlEventStore, row: TransactionRow, events: TransitionEvent[]): Promise<TransactionRow> {
  return db.transaction(async (tx) => {
    const result = await store.appendIn(tx, transactionStream(row.transaction_id), events, row.revision);
    for (const e of result.events) await applyTransactionEvent(tx, e);
    const [updated] = await tx.query<TransactionRow>('SELECT * FROM commerce_transactions WHERE transaction_id = $1', [row.transaction_id]);
    return updated;
  });
}

/**
 * Rejects escalated authorizations whose window has closed, with EXPIRED and the system as the
 * actor (never as a human decision). Needs no signing key, so the worker role runs it alone.
 */
export class AuthorizationExpiry {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** One pass of the sweep over what is due; returns how many it expired. */
  async expireDue(limit = 100): Promise<number> {
    const due = await this.db.query<TransactionRow>(
      `SELECT * FROM commerce_transactions WHERE status = 'needs_review' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [this.now().toISOString(), limit],
    );
    let expired = 0;
    for (const row of due) {
      try {
        await this.expire(row);
        expired++;
      } catch (err) {
        if (!(err instanceof WrongExpectedVersion)) throw err; // a reviewer or another sweeper won
      }
    }
    return expired;
  }

  async expire(row: TransactionRow): Promise<void> {
    await appendTransition(this.db, this.store, row, [
      {
        type: 'authorization.rejected',
        data: {
          transaction_id: row.transaction_id,
          authorization_id: row.authorization_id,
          organization_id: row.organization_id,
          status: nextStatus(row.status, 'authorization.rejected'),
          decision: 'blocked',
          reason_code: 'EXPIRED',
          rejected_by: 'expiry',
          released: row.reservations,
        },
        metadata: { actor: 'system:expiry-sweep', correlation_id: row.transaction_id },
      },
    ]);
  }
}

/**
 * Locks the spend rows of the cap windows (creating them first) in a fixed order, so concurrent
 * authorizations against one cap queue up instead of overshooting it, and never deadlock.
 */
async function lockSpend(tx: SqlExecutor, organizationId: string, windows: CapWindow[]): Promise<Map<string, number>> {
  const spent = new Map<string, number>();
  if (windows.length === 0) return spent;
  const keys = [...new Set(windows.map((w) => w.key))].sort();
  await tx.query(
    `INSERT INTO commerce_spend (organization_id, cap_key, reserved_cents) SELECT $1, k, 0 FROM unnest($2::text[]) k ORDER BY k ON CONFLICT DO NOTHING`,
    [organizationId, keys],
  );
  const rows = await tx.query<{ cap_key: string; reserved_cents: string | number }>(
    'SELECT cap_key, reserved_cents FROM commerce_spend WHERE organization_id = $1 AND cap_key = ANY($2::text[]) ORDER BY cap_key FOR UPDATE',
    [organizationId, keys],
  );
  for (const r of rows) spent.set(r.cap_key, Number(r.reserved_cents));
  return spent;
}

export type { RecordedEvent };
