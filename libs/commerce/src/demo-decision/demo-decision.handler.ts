import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Clock } from '@app/core';
import { CommerceAuthority } from '../authorize-payment/commerce-authority';
import { evaluatePolicy, Evaluation } from '../domain/evaluate';
import { PolicyDocument, policyHash } from '../domain/policy';
import { decisionRecordPayload } from '../domain/request-authorization';
import { DECISION_SCHEMA, SignedRecord, signRecord } from '../receipts/signed-record';
import { COMMERCE_CLOCK } from '../transactions/commerce-clock';
import { DEMO_POLICY } from './demo-policy';
import { DemoDecisionQuery } from './demo-decision.query';

export interface DemoDecision extends Evaluation {
  demo: true;
  policy: PolicyDocument;
  policy_hash: string;
  decision_record: SignedRecord;
}

/**
 * The decision-ledger demo: the request evaluated against the fixed demo policy and its decision
 * signed as a payment_decision.v1 record, so a visitor can verify it offline like a real one.
 * The record says `demo: true` and names no organization or transaction; nothing is stored.
 */
@QueryHandler(DemoDecisionQuery)
export class DemoDecisionHandler implements IQueryHandler<DemoDecisionQuery, DemoDecision> {
  constructor(
    private readonly authority: CommerceAuthority,
    @Inject(COMMERCE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(q: DemoDecisionQuery): Promise<DemoDecision> {
    const now = this.clock.now();
    const evaluation = evaluatePolicy(DEMO_POLICY, q.request, { now, spent: () => 0 });
    const hash = policyHash(DEMO_POLICY);
    const ids = { transaction_id: null, authorization_id: null, organization_id: null };
    const payload = decisionRecordPayload(ids, evaluation, q.request, { policy_id: 'demo', policy_version: null, policy_hash: hash }, this.authority.issuer, now);
    const record = signRecord(DECISION_SCHEMA, { demo: true, ...payload }, this.authority.sign);
    return { demo: true, ...evaluation, policy: DEMO_POLICY, policy_hash: hash, decision_record: record };
  }
}
