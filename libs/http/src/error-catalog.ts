/** One code of the catalog: its HTTP status, whether repeating the same request may succeed, and when it happens. */
export interface ErrorCatalogEntry {
  readonly status: number;
  /**
   * The spec's retryable flag, in every error body. true only where the same request may succeed
   * later without any change: a limit (429), a dependency down (503), a transient conflict (a
   * concurrent change, a request still running) and a settlement that did not complete (502). The
   * SDK retries by itself only 429 and 503 whose flag is true (the backoff contract); never a false one.
   */
  readonly retryable: boolean;
  /** docs/errors.md's "when" column (`npm run docs:errors` writes the table from this one). */
  readonly when: string;
}

/**
 * The one table of error codes (docs/errors.md is generated from it): a domain error's code gets
 * its HTTP status here (domain code throws DomainError(code, …) and never names a status), and
 * every error body gets its `retryable` flag here. A code thrown anywhere must be listed
 * (error-docs.spec.ts checks it).
 */
export const ERROR_CATALOG: Readonly<Record<string, ErrorCatalogEntry>> = Object.freeze({
invalid_json: { status: 400, retryable: false, when: 'the body is not valid JSON, is empty with `Content-Type: application/json`, contains `__proto__`/`constructor.prototype` keys, or holds values outside JSON (lone surrogates)' },
  validation_failed: { status: 400, retryable: false, when: 'the body, query or path parameters break the endpoint\'s schema; `details` is a list of `{ field, message }` naming every failing field' },
  bad_request: { status: 400, retryable: false, when: 'any other malformed request' },
  content_required: { status: 400, retryable: false, when: '`POST /api/notary/create` without `content`' },
  invalid_content: { status: 400, retryable: false, when: 'content that is not valid Unicode (a lone surrogate), or JSON that cannot be canonicalized' },
  invalid_prediction_receipt: { status: 400, retryable: false, when: 'content declaring `prediction_receipt.v1` breaks its schema; `details[0].field` names the field' },
  invalid_prediction_manifest: { status: 400, retryable: false, when: 'the same for `prediction_manifest.v1`, including a `manifest_hash` that is not the Merkle root of `prediction_hashes`' },
  invalid_event: { status: 400, retryable: false, when: 'an event could not be stored as given (e.g. data that is not canonical JSON)' },
  invalid_policy: { status: 400, retryable: false, when: '`PUT /api/cdp/policies/{policy_id}`: the policy document breaks its schema (unknown field, a currency that is not ISO 4217, an amount that is not a positive integer, `review_above_cents` above `per_transaction_cents`, a list over 1,000 entries, …); `details` lists `{ field, message }`' },
  idempotency_key_required: { status: 400, retryable: false, when: 'a route that needs `Idempotency-Key` got none' },
  approval_amount_exceeds_request: { status: 400, retryable: false, when: 'an approval\'s `amount_cents` is above the requested amount (an approval may only lower it)' },
  key_expiry_beyond_creator: { status: 400, retryable: false, when: '`POST /api/keys` by a key that expires: the new key has no `expires_at`, or a later one than the creating key\'s (it is refused, never shortened); `details.creator_expires_at`' },
  invalid_idempotency_key: { status: 400, retryable: false, when: '`Idempotency-Key` is not 1..255 printable ASCII characters' },
  webhook_target_not_allowed: { status: 400, retryable: false, when: 'a webhook endpoint `url` whose host is, or resolves to, a non-public address (private, loopback, link-local, unique-local, CGNAT, multicast, …), unless `WEBHOOK_ALLOW_PRIVATE_TARGETS=true`' },
  webhook_target_unresolvable: { status: 400, retryable: false, when: 'a webhook endpoint `url` whose host name does not resolve' },
  auth_required: { status: 401, retryable: false, when: 'the `Authorization` header is missing on a protected route, malformed (not `Bearer cdp_live_…`/`cdp_test_…`), or the key is unknown, revoked or expired; on `GET /metrics`, the bearer is not `METRICS_TOKEN`' },
  sign_in_failed: { status: 401, retryable: false, when: 'console sign-in: a wrong email or password (the same answer for an unknown address), or a one-time sign-in link that is unknown, used or expired' },
  notary_paywall: { status: 402, retryable: false, when: 'the organization used its 3 free certifications and has no credits' },
  payment_declined: { status: 402, retryable: false, when: '`POST /api/cdp/transactions/{id}/execute`: the settlement provider declined the payment; final (a declined payment is not retried; a later execute answers 409 `payment_declined`)' },
  forbidden: { status: 403, retryable: false, when: 'the credential may not do this' },
  insufficient_scope: { status: 403, retryable: false, when: 'the key lacks a scope the endpoint needs; `POST /api/keys` asking for a scope the creating key lacks; `DELETE /api/keys/{key_id}` of a key holding a scope the revoking key lacks. `details.missing_scopes` names them' },
  key_mode_mismatch: { status: 403, retryable: false, when: '`POST /api/keys`: the new key\'s `mode` is not the creating key\'s (a test key cannot create live keys, nor a live key test ones); `details.creator_mode`' },
  csrf_token_invalid: { status: 403, retryable: false, when: 'a console form without the session\'s CSRF token (or the sign-in form\'s), or with another one: reload the page' },
  owner_role_required: { status: 403, retryable: false, when: 'making someone an owner, changing an owner\'s role, issuing an owner\'s sign-in link or deactivating an owner, by anyone but an owner (an admin, an API key)' },
  reviewer_is_requester: {
    status: 403,
    retryable: false,
    when: 'approve or reject under a policy with `review.require_distinct_reviewer`, or approve under `review.approvals_required: 2` (with or without it): the reviewer is the requester\'s principal — the key that asked for the payment, a key with the same owner, or a key in the same creator chain (one made the other, transitively, as recorded in `created_by`, or one console user made both)',
  },
  receipt_not_available: { status: 404, retryable: false, when: '`GET /api/cdp/receipts/{id}` for a transaction that has not executed; its signed decision record is at `/api/cdp/transactions/{id}/decision`' },
  not_found: { status: 404, retryable: false, when: 'no such resource, or no such route or method. Another organization\'s resources also answer 404' },
  concurrent_modification: {
    status: 409,
    retryable: true,
    when: 'the resource changed concurrently (optimistic concurrency); retry. Also `POST /api/notary/create` when the signing key was revoked each time the certificate was signed (it is signed again under the new key, up to 3 times, before this answer), and likewise `POST /api/cdp/authorize`, `POST /api/cdp/approvals/{id}/approve` or `/reject` and `POST /api/cdp/transactions/{id}/execute` for the decision record, review or receipt they sign (after an execute\'s 409 the payment is settled; executing again issues the receipt)',
  },
  email_taken: { status: 409, retryable: false, when: '`POST /api/users`: a user with this email exists already in this organization (an address is one user per organization; other organizations\' people never change the answer)' },
  last_owner: { status: 409, retryable: false, when: '`POST /api/users/{id}/deactivate` (or the people page): this is the organization\'s last active owner; make someone else an owner first' },
  event_id_conflict: { status: 409, retryable: false, when: 'an event id was reused for different content' },
  authorization_not_pending: { status: 409, retryable: false, when: 'approving or rejecting an authorization that is not awaiting review (already decided, by a reviewer or the expiry sweep, possibly concurrently); `details.status` is its state' },
  reviewer_already_approved: { status: 409, retryable: false, when: 'approving under a policy with `review.approvals_required: 2`: this reviewer (the same key, another key with the same owner, or a key in the same creator chain) already gave the first approval; a different person must give the second. `details.approvals_required`, `details.approvals_recorded`' },
  authorization_expired: { status: 409, retryable: false, when: 'the authorization window (`expiration_iso`) has closed: a late approval (the expiry is recorded instead) or a late execute' },
  transaction_not_authorized: { status: 409, retryable: false, when: 'executing a transaction that is not `authorized` (needs review, rejected); `details.status`' },
  execution_in_progress: { status: 409, retryable: true, when: 'another execute of this transaction is settling; see `Retry-After`' },
  provider_unavailable: { status: 409, retryable: false, when: 'a live-mode (`cdp_live_`) transaction, and no live settlement provider is configured' },
  illegal_transition: { status: 409, retryable: false, when: 'the transaction\'s lifecycle does not allow this step in its current status (e.g. approving a transaction that is not `needs_review`, executing a rejected one); `details.from` and `details.event` name them' },
  idempotency_request_in_progress: { status: 409, retryable: true, when: 'a request with this `Idempotency-Key` is still running (a duplicate waits up to 5 s for it first); see `Retry-After`' },
  webhook_endpoint_disabled: { status: 409, retryable: false, when: 'a test ping, redelivery or recover for a webhook endpoint that is disabled or deleted; enable it first' },
  webhook_delivery_pending: { status: 409, retryable: true, when: 'redelivering a webhook delivery whose attempts are still running' },
  api_key_limit_reached: { status: 409, retryable: false, when: 'creating an API key when the organization already has `MAX_ACTIVE_API_KEYS` (default 100) active keys; revoke one first. `details.max_active_keys`' },
  last_key_manager: { status: 409, retryable: false, when: '`DELETE /api/keys/{key_id}` (or the console) of the organization\'s last active key holding `keys:manage`; create another first (the operator\'s `sigil keys:revoke` may)' },
  webhook_endpoint_limit: { status: 409, retryable: false, when: 'the organization already has 100 webhook endpoints' },
  payload_too_large: { status: 413, retryable: false, when: 'the request body exceeds `BODY_LIMIT_BYTES`' },
  content_too_large: { status: 413, retryable: false, when: '`POST /api/notary/create`: `content` over 5,000,000 characters' },
  unsupported_media_type: { status: 415, retryable: false, when: 'the body\'s `Content-Type` is not accepted (send `application/json`)' },
  idempotency_key_reused: { status: 422, retryable: false, when: 'this `Idempotency-Key` was already used (within 24 h, in this organization) with a different body, method or path, or by another caller: another API key of the organization (or, on the console\'s forms, another person)' },
  legacy_import_refused: { status: 422, retryable: false, when: '`sigil import-legacy` (the CLI, exit code 1): a certificate of the file was refused; `details.refused` lists `{ index, certificate_id, key_id, reason, message }` for each. Nothing was imported' },
  rate_limited: { status: 429, retryable: true, when: 'a rate limit was hit; see `Retry-After`' },
  settlement_failed: { status: 502, retryable: true, when: 'the provider failed or did not answer and did not settle; the transaction stays `authorized` and a retry (same provider idempotency key) is safe while the window lasts; `details.retryable` is true' },
  internal_error: { status: 500, retryable: false, when: 'an unexpected failure; the message is always the generic "Internal server error" and the details go to the server log only' },
  rate_limiter_unavailable: { status: 503, retryable: true, when: 'the rate-limit store (Redis) is unreachable on a surface that fails closed (sandbox key mint); `Retry-After: 5`' },
  not_ready: { status: 503, retryable: true, when: '`/readyz`: a dependency is down or the process is shutting down; `details.checks` says which' },
});

/** code → status, for the codes of the catalog. */
export const DOMAIN_ERROR_STATUS: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(Object.entries(ERROR_CATALOG).map(([code, e]) => [code, e.status])));

/** A code missing from the table is a programming error: it surfaces as 409 (a refused decision), never as a 500. */
export const statusOfDomainError = (code: string): number => DOMAIN_ERROR_STATUS[code] ?? 409;

/**
 * The `retryable` flag of an error body: the catalog's, or for a code outside it (Fastify's and
 * Nest's own statuses: 405, 408, 414, 431, a 503 while closing…) true exactly for 429 and 503.
 */
export const isRetryableError = (code: string, status: number): boolean => ERROR_CATALOG[code]?.retryable ?? (status === 429 || status === 503);
