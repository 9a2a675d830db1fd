import type { AuthorizationRequest } from '../domain/authorization-request';

/** A request decided against the demo policy (POST /api/demo/decision-ledger). */
export class DemoDecisionQuery {
  constructor(readonly request: AuthorizationRequest) {}
}
