import type { AuthorizationRequest } from './authorization-request';
import { CapWindow, evaluatePolicy, Evaluation } from './evaluate';
import { nextStatus, TransactionStatus } from './lifecycle';
import type { PolicyDocument } from './policy';

/** The policy version a request is evaluated against (null: the organization has no such policy). */
export interface PolicyVersionInput {
  version: number;
  policy: PolicyDocument;
  policy_hash: string;
}

export interface RequestAuthorization {
  transactionId: string;
  authorizationId: string;
  orgId: string;
  /** `api_key:<key_id>`. */
  actor: string;
  mode: 'live' | 'test';
  /** The provider this transaction would settle through: `sandbox`, `live`, or `unconfigured`. */
  provider: string;
  policyId: string;
  policy: PolicyVersionInput | null;
  request: AuthorizationRequest;
}

export interface AuthorizationContext {
  now: Date;
  issuer: string;
  /** The cap windows the policy has for this request, and what each has spent already. */
  windows: CapWindow[];
  spent: ReadonlyMap<string, number>;
  /** Signs the decision record (payment_decision.v1); returns the signed document. */
  signDecision(payload: Record<string, unknown>): Record<string, unknown>;
}

export interface AuthorizationDecisionView {
  authorization_id: string;
  transaction_id: string;
  decision: Evaluation['decision'];
  policy_id: string;
  policy_hash: string | null;
  reason_code: string | null;
  status: TransactionStatus;
  expires_at: string;
}

/**
 * A new transaction: authorization.requested and its decision, in one append. The decision is
 * the policy's (evaluatePolicy); a decision that holds reserves its amount on every cap window,
 * and every decision, refusals included, carries its signed record.
 */
export function requestAuthorization(cmd: RequestAuthorization, ctx: AuthorizationContext) {
  const { request } = cmd;
  const evaluation = evaluatePolicy(cmd.policy?.policy ?? null, request, { now: ctx.now, spent: (w) => ctx.spent.get(w.key) ?? 0 });
  const holds = evaluation.decision !== 'blocked';
  const reservations = holds ? ctx.windows.map((w) => ({ cap_key: w.key, amount_cents: request.amount_cents })) : [];
  const spend = ctx.windows.map((w) => ({ cap_key: w.key, limit_cents: w.limit_cents, spent_before_cents: ctx.spent.get(w.key) ?? 0 }));
  const decidedType =
    evaluation.decision === 'authorized' ? 'authorization.approved' : evaluation.decision === 'needs_review' ? 'authorization.escalated' : 'authorization.rejected';
  const requestedStatus = nextStatus(null, 'authorization.requested');
  const decidedStatus = nextStatus(requestedStatus, decidedType);
  const policyHash = cmd.policy?.policy_hash ?? null;
  const decidedAt = ctx.now.toISOString();
  const base = { transaction_id: cmd.transactionId, authorization_id: cmd.authorizationId, organization_id: cmd.orgId };
  const decisionRecord = ctx.signDecision(
    decisionRecordPayload(base, evaluation, request, { policy_id: cmd.policyId, policy_version: cmd.policy?.version ?? null, policy_hash: policyHash }, ctx.issuer, ctx.now),
  );
  const requested = {
    ...base,
    status: requestedStatus,
    request,
    policy_id: cmd.policyId,
    policy_version: cmd.policy?.version ?? null,
    policy_hash: policyHash,
    mode: cmd.mode,
    provider: cmd.provider,
  };
  const decided = {
    ...base,
    status: decidedStatus,
    decision: evaluation.decision,
    reason_code: evaluation.reason_code,
    policy_id: cmd.policyId,
    policy_hash: policyHash,
    evaluated_at: decidedAt,
    spend,
    reservations,
    decision_record: decisionRecord,
    ...(decidedType === 'authorization.rejected' ? { rejected_by: 'policy' as const } : {}),
  };
  const metadata = { actor: cmd.actor, correlation_id: cmd.transactionId };
  const events = [
    { type: 'authorization.requested', data: requested, metadata },
    { type: decidedType, data: decided, metadata },
  ];
  return { events, view: decisionViewOf(events[0], events[1]) };
}

/**
 * The decision as it was answered, from the transaction's first two events (requested, decided):
 * what a request that already decided this transaction answers again.
 */
export function decisionViewOf(requested: { data: unknown }, decided: { data: unknown }): AuthorizationDecisionView {
  const r = requested.data as { request: AuthorizationRequest };
  const d = decided.data as { transaction_id: string; authorization_id: string; status: TransactionStatus; decision: Evaluation['decision']; reason_code: string | null; policy_id: string; policy_hash: string | null };
  return {
    authorization_id: d.authorization_id,
    transaction_id: d.transaction_id,
    decision: d.decision,
    policy_id: d.policy_id,
    policy_hash: d.policy_hash,
    reason_code: d.reason_code,
    status: d.status,
    expires_at: new Date(r.request.expiration_iso).toISOString(),
  };
}

/** What a payment_decision.v1 record signs: the ids, the decision, the request and the exact policy version that made it. */
export function decisionRecordPayload(
  ids: { transaction_id: string | null; authorization_id: string | null; organization_id: string | null },
  evaluation: Pick<Evaluation, 'decision' | 'reason_code'>,
  request: AuthorizationRequest,
  policy: { policy_id: string; policy_version: number | null; policy_hash: string | null },
  issuer: string,
  at: Date,
) {
  return { ...ids, decision: evaluation.decision, reason_code: evaluation.reason_code, request: { ...request }, ...policy, issuer, decided_at: at.toISOString() };
}
