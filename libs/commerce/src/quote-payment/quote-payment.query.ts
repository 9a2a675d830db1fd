import type { AuthorizationRequest } from '../domain/authorization-request';

/** What authorize would decide for this request now, recording nothing (POST /api/cdp/quote). */
export class QuotePaymentQuery {
  constructor(
    readonly orgId: string,
    readonly request: AuthorizationRequest,
  ) {}
}
