import { z } from 'zod';
import { apiInput, apiOutput } from '@app/http';
import { authorizationRequestSchema } from '../domain/authorization-request';
import { REASON_CODES } from '../domain/evaluate';
import { TRANSACTION_STATUSES } from '../domain/lifecycle';
import { policySchema } from '../domain/policy';
import { timelineAnchorSchemas } from './timeline-anchor.openapi';

/** Request and response shapes of the commerce routes, named in the OpenAPI document (and so in the SDK). */

// The request and the policy validate with these very schemas; they are answered back as well.
apiInput('AuthorizationRequest', authorizationRequestSchema);
apiOutput('AuthorizationRequest', authorizationRequestSchema);
apiInput('PolicyDocument', policySchema);
apiOutput('PolicyDocument', policySchema);

const decision = z.enum(['authorized', 'blocked', 'needs_review']);
const status = z.enum(TRANSACTION_STATUSES as [string, ...string[]]);
const reasonCode = z.enum(REASON_CODES as [string, ...string[]]).nullable();
// A transaction's reason also records a human refusal.
const transactionReason = z.enum(['REJECTED_BY_REVIEWER', ...REASON_CODES]).nullable();
const hashTagged = () => z.string().describe('sha256:<64 lowercase hex>');

export const authorizationDecisionSchema = apiOutput(
  'AuthorizationDecision',
  z.object({
    authorization_id: z.string(),
    transaction_id: z.string(),
    decision,
    policy_id: z.string(),
    policy_hash: z.string().nullable(),
    reason_code: reasonCode,
    status,
    created_at: z.string(),
    expires_at: z.string(),
  }),
);

export const transactionSchema = apiOutput(
  'Transaction',
  z.object({
    transaction_id: z.string(),
    authorization_id: z.string(),
    status,
    decision,
    reason_code: transactionReason,
    amount_cents: z.number().int(),
    approved_amount_cents: z.number().int().nullable(),
    currency: z.string(),
    merchant_id: z.string(),
    purpose_tag: z.string(),
    delegated_authority: z.string().nullable(),
    policy_id: z.string(),
    policy_version: z.number().int().nullable(),
    policy_hash: z.string().nullable(),
    mode: z.enum(['test', 'live']),
    provider: z.string(),
    provider_reference: z.string().nullable(),
    execution: z.object({
      state: z.enum(['settling', 'failed', 'declined', 'succeeded']).nullable(),
      attempts: z.number().int(),
      last_attempt_at: z.string().nullable(),
    }),
    expires_at: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

export const transactionPageSchema = apiOutput('TransactionPage', z.object({ items: z.array(transactionSchema), next_cursor: z.string().nullable() }));

const recordSignature = apiOutput('RecordSignature', z.object({ alg: z.literal('Ed25519'), key_id: z.string(), value: z.string().describe('base64url, no padding') }));

export const paymentReceiptSchema = apiOutput(
  'PaymentReceipt',
  z
    .object({
      schema_version: z.literal('payment_receipt.v1'),
      payload: z.object({
        transaction_id: z.string(),
        authorization_id: z.string(),
        organization_id: z.string(),
        amount_cents: z.number().int(),
        currency: z.string(),
        merchant_id: z.string(),
        purpose_tag: z.string(),
        delegated_authority: z.string().nullable(),
        provider: z.string(),
        provider_reference: z.string().nullable(),
        policy_id: z.string(),
        policy_hash: z.string().nullable(),
        timeline_last_event_hash: hashTagged(),
        issuer: z.string(),
        issued_at: z.string(),
      }),
      receipt_hash: hashTagged().describe('SHA-256 of the RFC 8785 bytes of payload'),
      signature: recordSignature,
    })
    .describe('A signed payment receipt: verify offline against /.well-known/signing-keys.json'),
);

export const paymentDecisionRecordSchema = apiOutput(
  'PaymentDecisionRecord',
  z
    .object({
      schema_version: z.literal('payment_decision.v1'),
      payload: z.object({
        transaction_id: z.string(),
        authorization_id: z.string(),
        organization_id: z.string(),
        decision,
        reason_code: reasonCode,
        request: authorizationRequestSchema,
        policy_id: z.string(),
        policy_version: z.number().int().nullable(),
        policy_hash: z.string().nullable(),
        issuer: z.string(),
        decided_at: z.string(),
      }),
      record_hash: hashTagged().describe('SHA-256 of the RFC 8785 bytes of payload'),
      signature: recordSignature,
      reviews: z
        .array(
          z
            .object({
              schema_version: z.literal('payment_review.v1'),
              payload: z.object({
                transaction_id: z.string(),
                authorization_id: z.string(),
                organization_id: z.string(),
                review: z.enum(['approved', 'rejected']),
                reviewer: z.object({ actor: z.string(), key_id: z.string().nullable(), name: z.string().nullable() }),
                note: z.string().nullable(),
                requested_amount_cents: z.number().int(),
                approved_amount_cents: z.number().int().nullable(),
                decided_event_hash: z.string().describe('hash of the timeline event the review decided (the escalation, or the first approval when two are required)'),
                issuer: z.string(),
                reviewed_at: z.string(),
                approval: z.number().int().optional().describe('under `review.approvals_required: 2`: which approval this is (1 or 2)'),
                approvals_required: z.number().int().optional().describe('under `review.approvals_required: 2`: the approvals the policy requires'),
              }),
              record_hash: hashTagged().describe('SHA-256 of the RFC 8785 bytes of payload'),
              signature: recordSignature,
            })
            .describe("A person's signed review of an escalated authorization"),
        )
        .describe('Every human review of this authorization, in order (empty when none); each verifies like the decision record'),
    })
    .describe('The signed record of the policy decision, refusals included, with every signed human review'),
);

export const executionResultSchema = apiOutput(
  'ExecutionResult',
  z.object({
    outcome: z.enum(['succeeded', 'already_executed']),
    transaction: transactionSchema,
    receipt: paymentReceiptSchema.optional(),
  }),
);

const chainVerdict = apiOutput(
  'ChainVerdict',
  z.union([
    z.object({ valid: z.literal(true), stream_id: z.string(), events: z.number().int(), last_hash: z.string().nullable() }),
    z.object({
      valid: z.literal(false),
      stream_id: z.string(),
      events: z.number().int(),
      broken_at_revision: z.number().int(),
      event_id: z.string(),
      reason: z.enum(['hash_mismatch', 'prev_hash_mismatch', 'revision_gap']),
      expected: z.union([z.string(), z.number(), z.null()]),
      actual: z.union([z.string(), z.number(), z.null()]),
    }),
  ]),
);

export const timelineEntrySchema = apiOutput(
  'TimelineEntry',
  z.object({
    event_id: z.string(),
    event_type: z.string(),
    sequence: z.number().int(),
    timestamp: z.string(),
    actor: z.object({ type: z.string(), id: z.string() }),
    status: status.describe('the status the event records: the transaction’s status after it'),
    entered: z
      .array(status)
      .describe(
        'the statuses the event moved the transaction into, in order (empty when it changed none): authorization.requested enters `initiated` (the request received) and then `evaluating` (its policy and spend-cap check), which the decision event that follows it ends',
      ),
    metadata: z.record(z.string(), z.unknown()),
    hash: z.string(),
    prev_hash: z.string().nullable(),
    stored: z
      .object({
        event_id: z.string(),
        stream_id: z.string(),
        revision: z.number().int(),
        type: z.string(),
        data: z.record(z.string(), z.unknown()),
        metadata: z.record(z.string(), z.unknown()),
        recorded_at: z.string(),
        prev_hash: z.string().nullable(),
        hash: z.string(),
      })
      .describe('the stored event: every field its hash covers'),
  }),
);

const { timelineAnchorVerdict } = timelineAnchorSchemas(recordSignature, hashTagged);

export const transactionTimelineSchema = apiOutput(
  'TransactionTimeline',
  z.object({
    transaction_id: z.string(),
    chain_valid: z.boolean().describe('the verdict: every link of the hash chain holds and the end is sound (anchor.valid); false on a missing, mismatched or forged anchor and on a truncated stream'),
    chain: chainVerdict,
    anchor: timelineAnchorVerdict,
    events: z.array(timelineEntrySchema),
  }),
);

const policyCheck = apiOutput('PolicyCheck', z.object({ rule: z.string(), passed: z.boolean(), detail: z.string().optional() }));

export const transactionReplaySchema = apiOutput(
  'TransactionReplay',
  z.object({
    transaction_id: z.string(),
    policy_id: z.string(),
    policy_version: z.number().int().nullable(),
    policy_hash: z.string().nullable(),
    policy_hash_matches: z.boolean(),
    evaluated_at: z.string(),
    recorded: z.object({ decision, reason_code: reasonCode }),
    replayed: z.object({ decision, reason_code: reasonCode, checks: z.array(policyCheck) }),
    reproduced: z.boolean(),
  }),
);

export const receiptVerificationSchema = apiOutput(
  'ReceiptVerification',
  z.object({
    verified: z.boolean(),
    schema_version: z.string().nullable(),
    transaction_id: z.string().nullable(),
    key_id: z.string().nullable(),
    reason: z.string().nullable().describe('why verified is false, or a warning'),
  }),
);

const policyVersionFields = { policy_id: z.string(), version: z.number().int(), policy_hash: z.string(), policy: policySchema, created_at: z.string() };
export const policyVersionSchema = apiOutput('PolicyVersion', z.object(policyVersionFields));
export const policyVersionRecordedSchema = apiOutput(
  'PolicyVersionRecorded',
  z.object({ ...policyVersionFields, recorded: z.boolean().describe('false when the document hashed as the current version') }),
);
export const policyVersionListSchema = apiOutput('PolicyVersionList', z.object({ policy_id: z.string(), versions: z.array(policyVersionSchema) }));
export const demoDecisionSchema = apiOutput(
  'DemoDecision',
  z.object({
    demo: z.literal(true),
    decision,
    reason_code: reasonCode,
    checks: z.array(policyCheck),
    policy: z.record(z.string(), z.unknown()).describe('the fixed demo policy'),
    policy_hash: z.string(),
    decision_record: z
      .object({ schema_version: z.literal('payment_decision.v1'), payload: z.record(z.string(), z.unknown()), record_hash: z.string(), signature: recordSignature })
      .describe('signed like a real decision record (payload.demo: true); verify it offline against /.well-known/signing-keys.json'),
  }),
);

export const paymentQuoteSchema = apiOutput(
  'PaymentQuote',
  z.object({
    quoted: z.literal(true),
    policy_id: z.string(),
    version: z.number().int().nullable().describe('null: no such policy (blocked, POLICY_NOT_FOUND, as authorize would be)'),
    policy_hash: z.string().nullable(),
    evaluated_at: z.string(),
    decision,
    reason_code: reasonCode,
    checks: z.array(policyCheck),
    spend_caps_evaluated_against: z.enum(['none', 'recorded_spend']),
  }),
);
export const policySimulationSchema = apiOutput(
  'PolicySimulation',
  z.object({
    policy_id: z.string(),
    version: z.number().int(),
    policy_hash: z.string(),
    evaluated_at: z.string(),
    decision,
    reason_code: reasonCode,
    checks: z.array(policyCheck),
    spend_caps_evaluated_against: z.enum(['none', 'recorded_spend']),
  }),
);
