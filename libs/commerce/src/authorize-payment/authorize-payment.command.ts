import type { AuthorizationRequest } from '../domain/authorization-request';

/** An agent asks to pay (POST /api/cdp/authorize): evaluate the policy and record the decision. */
export class AuthorizePaymentCommand {
  constructor(
    readonly orgId: string,
    /** `api_key:<key_id>`. */
    readonly actor: string,
    readonly mode: 'live' | 'test',
    readonly request: AuthorizationRequest,
    /** The idempotent request's name (IdempotentRequest.requestId), when it came with a key: the transaction's ids derive from it. */
    readonly requestId?: string,
  ) {}
}
