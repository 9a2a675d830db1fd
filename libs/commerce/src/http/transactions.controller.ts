import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller, Throttle } from '@app/access';
import { AppError } from '@app/core';
import { apiInput, ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiQueryParams, schemaRef, ZodPipe } from '@app/http';
import { Idempotent } from '@app/idempotency';
import { parseAuthorizationRequest } from '../domain/authorization-request';
import { verifyRecord } from '../receipts/signed-record';
import { RecordVerifier } from '../receipts/record-verifier';
import { AUTHORIZATION_ID_RE, TRANSACTION_ID_RE } from '../transactions/transaction.events';
import { TransactionQueries, transactionView } from '../transactions/transaction.queries';
import { TransactionService } from '../transactions/transaction.service';
import './commerce.openapi';

const txParams = z.object({ id: z.string().regex(TRANSACTION_ID_RE, 'must be a transaction id: txn_ followed by 32 hex digits') });
const authParams = z.object({ authorization_id: z.string().regex(AUTHORIZATION_ID_RE, 'must be an authorization id: auth_ followed by 32 hex digits') });
const receiptParams = z.object({ transaction_id: z.string().regex(TRANSACTION_ID_RE, 'must be a transaction id: txn_ followed by 32 hex digits') });
const instant = z.string().refine((v) => !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}/.test(v), 'must be an ISO-8601 date or date-time');
const listQuery = z.strictObject({
  status: z.enum(['initiated', 'evaluating', 'needs_review', 'authorized', 'executed', 'receipt_issued', 'rejected']).optional(),
  merchant_id: z.string().min(1).max(128).optional(),
  agent: z.string().min(1).max(256).optional(),
  from: instant.optional(),
  to: instant.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(512).optional(),
});
const approvalsQuery = listQuery.omit({ status: true });
const reviewBody = apiInput(
  'ApproveAuthorizationRequest',
  z.strictObject({
    note: z.string().max(2000).optional(),
    amount_cents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().describe('approve a lower amount'),
  }),
);
const rejectBody = apiInput('RejectAuthorizationRequest', z.strictObject({ note: z.string().max(2000).optional() }));
const idempotencyHeader = ApiHeader({ name: 'Idempotency-Key', required: false, description: '1..255 printable ASCII; the same key and body answer the first response again' });

const actorOf = (caller: AccessContext) => `api_key:${caller.principal!.keyId}`;

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp')
export class TransactionsController {
  constructor(
    @Inject(TransactionService) private readonly transactions: TransactionService,
    @Inject(TransactionQueries) private readonly queries: TransactionQueries,
  ) {}

  @Post('authorize')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('payments:write')
  @ApiOperation({ operationId: 'authorize', summary: 'Evaluate a payment_authorization.v1 request against the policy and record the decision' })
  @idempotencyHeader
  @ApiJsonBody('AuthorizationRequest')
  @ApiJsonResponse(200, 'AuthorizationDecision')
  async authorize(@Caller() caller: AccessContext, @Body() body: unknown) {
    const request = parseAuthorizationRequest(body ?? undefined);
    const p = caller.principal!;
    return this.transactions.authorize({ organizationId: p.orgId, actor: actorOf(caller), mode: p.mode }, request);
  }

  @Get('transactions')
  @Authenticated('payments:read')
  @ApiOperation({ operationId: 'listTransactions', summary: 'List transactions, filtered by state, date, merchant and agent, newest first, in cursor pages' })
  @ApiQueryParams(listQuery)
  @ApiJsonResponse(200, 'TransactionPage')
  list(@Caller() caller: AccessContext, @Query(new ZodPipe(listQuery, 'query')) q: z.infer<typeof listQuery>) {
    return this.queries.list(caller.principal!.orgId, q);
  }

  @Get('transactions/:id')
  @Authenticated('payments:read')
  @ApiOperation({ operationId: 'getTransaction', summary: 'A transaction’s current state' })
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'Transaction')
  async get(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>) {
    return transactionView(await this.transactions.row(caller.principal!.orgId, p.id));
  }

  @Get('transactions/:id/events')
  @Authenticated('payments:read')
  @ApiOperation({ operationId: 'getTransactionEvents', summary: "The transaction's full event timeline with its hash chain and a chain_valid verdict" })
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'TransactionTimeline')
  events(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>) {
    return this.queries.events(caller.principal!.orgId, p.id);
  }

  @Get('transactions/:id/replay')
  @Authenticated('payments:read')
  @ApiOperation({ operationId: 'replayTransaction', summary: 'Re-evaluate the recorded request against the exact policy version that decided it' })
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'TransactionReplay')
  replay(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>) {
    return this.queries.replay(caller.principal!.orgId, p.id);
  }

  @Get('transactions/:id/decision')
  @Authenticated('payments:read')
  @ApiOperation({ operationId: 'getDecisionRecord', summary: 'The signed record of the decision (payment_decision.v1), refusals included' })
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'PaymentDecisionRecord')
  decision(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>) {
    return this.queries.decisionRecord(caller.principal!.orgId, p.id);
  }

  @Post('transactions/:id/execute')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('payments:write')
  @ApiOperation({ operationId: 'executeTransaction', summary: 'Settle an authorized transaction through its settlement provider' })
  @idempotencyHeader
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'ExecutionResult')
  async execute(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>) {
    const result = await this.transactions.execute(caller.principal!.orgId, p.id, actorOf(caller));
    const body = { outcome: result.outcome, transaction: transactionView(result.transaction), ...(result.receipt ? { receipt: result.receipt } : {}) };
    if (result.outcome === 'declined') {
      throw new AppError('payment_declined', `the provider declined the payment (${result.error_code})`, 402, body);
    }
    if (result.outcome === 'failed') {
      // 502 with retryable: the transaction stays authorized and a retry reuses the provider key.
      throw new AppError('settlement_failed', `settlement did not complete (${result.error_code}); retry while the authorization window lasts`, 502, { ...body, retryable: true }, { 'Retry-After': '1' });
    }
    return body;
  }

  @Get('approvals')
  @Authenticated('approvals:manage')
  @ApiOperation({ operationId: 'listApprovals', summary: 'The human approval queue: authorizations awaiting review, filterable' })
  @ApiQueryParams(approvalsQuery)
  @ApiJsonResponse(200, 'TransactionPage')
  approvals(@Caller() caller: AccessContext, @Query(new ZodPipe(approvalsQuery, 'query')) q: z.infer<typeof approvalsQuery>) {
    return this.queries.list(caller.principal!.orgId, { ...q, status: 'needs_review' });
  }

  @Post('approvals/:authorization_id/approve')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('approvals:manage')
  @ApiOperation({ operationId: 'approveAuthorization', summary: 'Approve an escalated authorization, optionally for a lower amount' })
  @idempotencyHeader
  @ApiPathParams(authParams)
  @ApiBody({ required: false, schema: schemaRef('ApproveAuthorizationRequest') })
  @ApiJsonResponse(200, 'Transaction')
  async approve(@Caller() caller: AccessContext, @Param(new ZodPipe(authParams, 'params')) p: z.infer<typeof authParams>, @Body() raw: unknown) {
    const body = new ZodPipe(reviewBody).transform(raw ?? {});
    const row = await this.transactions.review(caller.principal!.orgId, p.authorization_id, { kind: 'approve', amount_cents: body.amount_cents, note: body.note ?? null }, actorOf(caller));
    return transactionView(row);
  }

  @Post('approvals/:authorization_id/reject')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('approvals:manage')
  @ApiOperation({ operationId: 'rejectAuthorization', summary: 'Reject an escalated authorization' })
  @idempotencyHeader
  @ApiPathParams(authParams)
  @ApiBody({ required: false, schema: schemaRef('RejectAuthorizationRequest') })
  @ApiJsonResponse(200, 'Transaction')
  async reject(@Caller() caller: AccessContext, @Param(new ZodPipe(authParams, 'params')) p: z.infer<typeof authParams>, @Body() raw: unknown) {
    const body = new ZodPipe(rejectBody).transform(raw ?? {});
    const row = await this.transactions.review(caller.principal!.orgId, p.authorization_id, { kind: 'reject', note: body.note ?? null }, actorOf(caller));
    return transactionView(row);
  }

  @Get('receipts/:transaction_id')
  @Authenticated('receipts:read')
  @ApiOperation({ operationId: 'getReceipt', summary: 'The signed payment_receipt.v1 receipt of an executed transaction' })
  @ApiPathParams(receiptParams)
  @ApiJsonResponse(200, 'PaymentReceipt')
  receipt(@Caller() caller: AccessContext, @Param(new ZodPipe(receiptParams, 'params')) p: z.infer<typeof receiptParams>) {
    return this.queries.receipt(caller.principal!.orgId, p.transaction_id);
  }
}

/** Public: anyone holding a receipt or decision record can have it checked against the published keys. */
@ApiTags('commerce')
@Controller('api/cdp/receipts')
export class ReceiptVerificationController {
  constructor(@Inject(RecordVerifier) private readonly verifier: RecordVerifier) {}

  @Post('verify')
  @HttpCode(200)
  @Throttle('public_verify_window')
  @ApiOperation({ operationId: 'verifyReceiptOnServer', summary: 'Verify a payment_receipt.v1 receipt or payment_decision.v1 record: its hash and its Ed25519 signature' })
  @ApiBody({
    required: true,
    description: 'The receipt or decision record, or {receipt: <it>}',
    schema: { anyOf: [schemaRef('PaymentReceipt'), schemaRef('PaymentDecisionRecord'), { type: 'object', required: ['receipt'], properties: { receipt: { anyOf: [schemaRef('PaymentReceipt'), schemaRef('PaymentDecisionRecord')] } } }] },
  })
  @ApiJsonResponse(200, 'ReceiptVerification')
  verify(@Body() body: unknown) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new AppError('validation_failed', 'The body must be the receipt document (an object)', 400, [{ field: '', message: 'must be a JSON object' }]);
    }
    const doc = (body as { receipt?: unknown }).receipt ?? body;
    const verdict = verifyRecord(doc, this.verifier.check);
    const d = doc as { schema_version?: unknown; payload?: { transaction_id?: unknown } };
    return {
      verified: verdict.valid,
      schema_version: typeof d.schema_version === 'string' ? d.schema_version : null,
      transaction_id: typeof d.payload?.transaction_id === 'string' ? d.payload.transaction_id : null,
      key_id: verdict.key_id,
      reason: verdict.valid ? (verdict.warning ?? null) : verdict.reason,
    };
  }
}
