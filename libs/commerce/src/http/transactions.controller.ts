import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { TRANSACTION_STATUSES, TransactionStatus } from '../domain/lifecycle';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller, Throttle } from '@app/access';
import { AppError } from '@app/core';
import { ApiJsonResponse, ApiPathParams, ApiQueryParams, schemaRef, ZodPipe } from '@app/http';
import { verifyRecord } from '../receipts/signed-record';
import { RecordVerifier } from '../receipts/record-verifier';
import { TRANSACTION_ID_RE } from '../transactions/transaction.events';
import { listingBoundField } from '../domain/fields';
import { txParams } from './commerce-http';
import { TransactionQueries, transactionView } from '../transactions/transaction.queries';
import { TransactionRows } from '../transactions/transaction-rows.repository';
import { AnchorTimelinesCommand } from '../anchor-timelines/anchor-timelines.command';
import './commerce.openapi';

const receiptParams = z.object({ transaction_id: z.string().regex(TRANSACTION_ID_RE, 'must be a transaction id: txn_ followed by 32 hex digits') });
const listQuery = z.strictObject({
  status: z
    .enum(TRANSACTION_STATUSES as [TransactionStatus, ...TransactionStatus[]])
    .optional()
    .describe(
      'the current status. Every status of the lifecycle is accepted; `initiated` and `evaluating` match no transaction, since the decision is recorded together with the request (the timeline, GET …/events, shows both in the `entered` of its authorization.requested entry)',
    ),
  merchant_id: z.string().min(1).max(128).optional(),
  agent: z.string().min(1).max(256).optional(),
  from: listingBoundField().optional(),
  to: listingBoundField().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(512).optional(),
});
const approvalsQuery = listQuery.omit({ status: true });

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp')
export class TransactionsController {
  constructor(
    @Inject(TransactionRows) private readonly rows: TransactionRows,
    @Inject(TransactionQueries) private readonly queries: TransactionQueries,
    private readonly commands: CommandBus,
  ) {}

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
    const row = await this.rows.byId(caller.principal!.orgId, p.id);
    if (!row) throw new AppError('not_found', `transaction ${p.id} not found`, 404);
    return transactionView(row);
  }

  @Get('transactions/:id/events')
  @Authenticated('payments:read')
  @ApiOperation({
    operationId: 'getTransactionEvents',
    summary: "The transaction's full event timeline with its hash chain, its anchor (a terminal timeline ends with a signed payment_timeline_anchor.v1) and a chain_valid verdict",
  })
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'TransactionTimeline')
  async events(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>) {
    const orgId = caller.principal!.orgId;
    const timeline = await this.queries.events(orgId, p.id);
    if (timeline.anchor.state !== 'pending') return timeline;
    // Terminal, and no anchor was ever written (the anchoring sweep has not come by yet): write it now.
    await this.commands.execute(new AnchorTimelinesCommand(1, { orgId, transactionId: p.id }));
    return this.queries.events(orgId, p.id);
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
  @ApiOperation({ operationId: 'getDecisionRecord', summary: 'The signed record of the decision (payment_decision.v1), refusals included, with every signed human review (payment_review.v1)' })
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'PaymentDecisionRecord')
  decision(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>) {
    return this.queries.decisionRecord(caller.principal!.orgId, p.id);
  }

  @Get('approvals')
  @Authenticated('approvals:manage')
  @ApiOperation({ operationId: 'listApprovals', summary: 'The human approval queue: authorizations awaiting review, filterable' })
  @ApiQueryParams(approvalsQuery)
  @ApiJsonResponse(200, 'TransactionPage')
  approvals(@Caller() caller: AccessContext, @Query(new ZodPipe(approvalsQuery, 'query')) q: z.infer<typeof approvalsQuery>) {
    return this.queries.list(caller.principal!.orgId, { ...q, status: 'needs_review' });
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
  @ApiOperation({
    operationId: 'verifyReceiptOnServer',
    summary: 'Verify a payment_receipt.v1 receipt, a payment_decision.v1 or payment_review.v1 record, or a payment_timeline_anchor.v1 anchor: its hash and its Ed25519 signature',
  })
  @ApiBody({
    required: true,
    description: 'The receipt, record or anchor, or {receipt: <it>}',
    schema: {
      anyOf: [
        schemaRef('PaymentReceipt'),
        schemaRef('PaymentDecisionRecord'),
        schemaRef('PaymentTimelineAnchor'),
        { type: 'object', required: ['receipt'], properties: { receipt: { anyOf: [schemaRef('PaymentReceipt'), schemaRef('PaymentDecisionRecord'), schemaRef('PaymentTimelineAnchor')] } } },
      ],
    },
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
