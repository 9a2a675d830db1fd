import { verifyCertificate, CertificateVerification, VerifyCertificateOptions } from '../verify/certificate';
import { RequestOptions, SigilTransport } from './transport';
import type { BodyOf, QueryOf, ResponseOf } from './types';

export { SigilTransport, newIdempotencyKey } from './transport';
export type { SigilClientOptions, RequestOptions, QueryValue } from './transport';

/** Per-call options of the state-changing methods. */
export type CallOptions = Pick<RequestOptions, 'idempotencyKey' | 'signal'>;

/** Builds a path, encoding each interpolated id: path`/api/certificates/${id}`. */
const path = (parts: TemplateStringsArray, ...ids: Array<string | number>) => parts.reduce((out, part, i) => out + encodeURIComponent(String(ids[i - 1])) + part);

// How each kind of call may be repeated after a network error (429 and 503 are retried for all:
// the service refused those before acting). Routes that replay by Idempotency-Key get one key
// per call, reused on every retry; other state-changing routes are not repeated, since a lost
// response may hide a change that was made.
const READ_ONLY: RequestOptions = { readOnly: true };
const ONCE: RequestOptions = { idempotencyKey: false, retryNetworkErrors: false };
const SAME_RESULT: RequestOptions = { idempotencyKey: false, retryNetworkErrors: true };

/**
 * The Sigil API client: one method per public endpoint, named as the endpoint's operationId in
 * the service's OpenAPI document and typed from it. Every call follows the backoff contract
 * (see SigilTransport.request); failures are SigilError.
 */
export class SigilClient extends SigilTransport {
  // ---- Certificates and verification (public, but issuance and credits: a key with certificates:write).

  /**
   * Issues a certificate. It carries an Idempotency-Key, but the issuance route does not replay by
   * key, so a network error is not retried: the first attempt may have issued.
   */
  issueCertificate(body: BodyOf<'issueCertificate'>, opts: CallOptions = {}): Promise<ResponseOf<'issueCertificate'>> {
    return this.request('POST', '/api/notary/create', { body, ...opts, retryNetworkErrors: false });
  }

  getCertificate(certificateId: string): Promise<ResponseOf<'getCertificate'>> {
    return this.request('GET', path`/api/certificates/${certificateId}`);
  }

  /** The exact signed payload, for offline verification with verifyCertificate. */
  getSignedPayload(certificateId: string): Promise<ResponseOf<'getSignedPayload'>> {
    return this.request('GET', path`/api/certificates/${certificateId}/signed-payload`);
  }

  /** The same SignedManifest, at /api/cert/{id}/manifest. */
  getManifest(certificateId: string): Promise<ResponseOf<'getManifest'>> {
    return this.request('GET', path`/api/cert/${certificateId}/manifest`);
  }

  /** The SignedManifest as the download endpoint serves it (application/service.manifest+json, parsed). */
  downloadCertificate(certificateId: string): Promise<ResponseOf<'downloadCertificate'>> {
    return this.request('GET', path`/api/certificates/${certificateId}/download`, { headers: { accept: 'application/service.manifest+json, application/json' } });
  }

  /** The server's verdict. To check the signature yourself, use verifyCertificateLocally. */
  verify(body: BodyOf<'verify'>): Promise<ResponseOf<'verify'>> {
    return this.request('POST', '/api/verify', { body, ...READ_ONLY });
  }

  verifyHash(body: BodyOf<'verifyHash'>): Promise<ResponseOf<'verifyHash'>> {
    return this.request('POST', '/api/verify/hash', { body, ...READ_ONLY });
  }

  /** The server-side recompute, saying which check failed. */
  getVerificationReport(certificateId: string): Promise<ResponseOf<'getVerificationReport'>> {
    return this.request('GET', path`/api/verify/${certificateId}`);
  }

  /** The anonymous sandbox: a small synthetic dataset certified on a fresh sandbox organization (10 per 24 h per IP). */
  generateSandboxDataset(): Promise<ResponseOf<'generateSandboxDataset'>> {
    return this.request('POST', '/api/sandbox/datasets');
  }

  /** A certificate's badge (JSON: shields.io endpoint format plus the verdict); `<id>.svg` on the service is the image. */
  getBadge(certificateId: string): Promise<ResponseOf<'getBadge'>> {
    return this.request('GET', path`/api/badge/${certificateId}`);
  }

  /** /.well-known/signing-keys.json: every key with its status. */
  getSigningKeys(): Promise<ResponseOf<'getSigningKeys'>> {
    return this.request('GET', '/.well-known/signing-keys.json');
  }

  getPredictionProof(certificateId: string, predictionHash: string): Promise<ResponseOf<'getPredictionProof'>> {
    const query: QueryOf<'getPredictionProof'> = { certificate_id: certificateId, hash: predictionHash };
    return this.request('GET', '/api/predictions/proof', { query });
  }

  /** Fetches the signed payload and the keys, and checks the signature here rather than trusting the server. */
  async verifyCertificateLocally(certificateId: string, options: VerifyCertificateOptions = {}): Promise<CertificateVerification> {
    const [signed, keys] = await Promise.all([this.getSignedPayload(certificateId), this.getSigningKeys()]);
    return verifyCertificate(signed, keys, { certificateId, ...options });
  }

  /** Buys issuance credits; the Idempotency-Key makes a retry the same checkout, charged once. */
  buyNotaryCredits(body: BodyOf<'buyNotaryCredits'>, opts: CallOptions = {}): Promise<ResponseOf<'buyNotaryCredits'>> {
    return this.request('POST', '/api/payments/notary-credits-checkout', { body, ...opts });
  }

  // ---- Registry.

  listRegistry(query: QueryOf<'listRegistry'> = {}): Promise<ResponseOf<'listRegistry'>> {
    return this.request('GET', '/v1/registry', { query });
  }

  /** Lists an artifact without a certificate (status `unverified`). */
  registerArtifact(body: BodyOf<'registerArtifact'>): Promise<ResponseOf<'registerArtifact'>> {
    return this.request('POST', '/v1/registry', { body, ...ONCE });
  }

  /** Publishes or edits the caller's entry. */
  updateRegistryEntry(entryId: string, body: BodyOf<'updateRegistryEntry'>): Promise<ResponseOf<'updateRegistryEntry'>> {
    return this.request('PATCH', path`/v1/registry/${entryId}`, { body, ...SAME_RESULT });
  }

  // ---- Access.

  /** The caller's lane and buckets; `agentDid` is sent as X-Agent-DID. Never rate-limited. */
  getQuota(options: { agentDid?: string } = {}): Promise<ResponseOf<'getQuota'>> {
    return this.request('GET', '/api/agents/me/quota', { headers: options.agentDid ? { 'x-agent-did': options.agentDid } : {} });
  }

  /** An ephemeral cdp_test_ key (every scope, 24 h) of a fresh sandbox organization; 3 per day per IP. */
  createSandboxKey(): Promise<ResponseOf<'createSandboxKey'>> {
    return this.request('POST', '/api/sandbox/keys', ONCE);
  }

  /** The calling key: its organization, scopes and mode. */
  getMe(): Promise<ResponseOf<'getMe'>> {
    return this.request('GET', '/api/me');
  }

  listApiKeys(): Promise<ResponseOf<'listApiKeys'>> {
    return this.request('GET', '/api/keys');
  }

  getApiKey(keyId: string): Promise<ResponseOf<'getApiKey'>> {
    return this.request('GET', path`/api/keys/${keyId}`);
  }

  // ---- Payment policies (payments:write to change, payments:read or :write to read).

  /** Records a new version (nothing is recorded when the document hashes as the current one), so repeating it is harmless. */
  putPolicy(policyId: string, policy: BodyOf<'putPolicy'>): Promise<ResponseOf<'putPolicy'>> {
    return this.request('PUT', path`/api/cdp/policies/${policyId}`, { body: policy, ...SAME_RESULT });
  }

  getPolicy(policyId: string): Promise<ResponseOf<'getPolicy'>> {
    return this.request('GET', path`/api/cdp/policies/${policyId}`);
  }

  listPolicyVersions(policyId: string): Promise<ResponseOf<'listPolicyVersions'>> {
    return this.request('GET', path`/api/cdp/policies/${policyId}/versions`);
  }

  getPolicyVersion(policyId: string, version: number): Promise<ResponseOf<'getPolicyVersion'>> {
    return this.request('GET', path`/api/cdp/policies/${policyId}/versions/${version}`);
  }

  /** The anonymous decision-ledger demo: a request decided against the fixed demo policy, with its signed record. */
  demoDecision(request: BodyOf<'demoDecision'>): Promise<ResponseOf<'demoDecision'>> {
    return this.request('POST', '/api/demo/decision-ledger', { body: request, ...READ_ONLY });
  }

  /** What authorize would decide for this request now (policy and recorded spend); records nothing, so it is safe to repeat. */
  quotePayment(request: BodyOf<'quotePayment'>): Promise<ResponseOf<'quotePayment'>> {
    return this.request('POST', '/api/cdp/quote', { body: request, ...READ_ONLY });
  }

  /** Evaluates a request against the policy's current version; records nothing. */
  simulatePolicy(policyId: string, request: BodyOf<'simulatePolicy'>): Promise<ResponseOf<'simulatePolicy'>> {
    return this.request('POST', path`/api/cdp/policies/${policyId}/simulate`, { body: request, ...READ_ONLY });
  }

  // ---- Agent commerce: authorize, review, settle, prove.

  /** POST /api/cdp/authorize, with one Idempotency-Key for the call (yours, or made here) reused on retries. */
  authorize(body: BodyOf<'authorize'>, opts: CallOptions = {}): Promise<ResponseOf<'authorize'>> {
    return this.request('POST', '/api/cdp/authorize', { body, ...opts });
  }

  listTransactions(query: QueryOf<'listTransactions'> = {}): Promise<ResponseOf<'listTransactions'>> {
    return this.request('GET', '/api/cdp/transactions', { query });
  }

  getTransaction(transactionId: string): Promise<ResponseOf<'getTransaction'>> {
    return this.request('GET', path`/api/cdp/transactions/${transactionId}`);
  }

  /** The full timeline; check it yourself with verifyTimeline. */
  getTransactionEvents(transactionId: string): Promise<ResponseOf<'getTransactionEvents'>> {
    return this.request('GET', path`/api/cdp/transactions/${transactionId}/events`);
  }

  /** Re-evaluates the recorded request against the exact policy version that decided it. */
  replayTransaction(transactionId: string): Promise<ResponseOf<'replayTransaction'>> {
    return this.request('GET', path`/api/cdp/transactions/${transactionId}/replay`);
  }

  /** The signed record of the decision (payment_decision.v1), refusals included. */
  getDecisionRecord(transactionId: string): Promise<ResponseOf<'getDecisionRecord'>> {
    return this.request('GET', path`/api/cdp/transactions/${transactionId}/decision`);
  }

  /** Settles an authorized transaction; replays by Idempotency-Key, so a retry cannot settle twice. */
  executeTransaction(transactionId: string, opts: CallOptions = {}): Promise<ResponseOf<'executeTransaction'>> {
    return this.request('POST', path`/api/cdp/transactions/${transactionId}/execute`, opts);
  }

  /** The human approval queue (approvals:manage). */
  listApprovals(query: QueryOf<'listApprovals'> = {}): Promise<ResponseOf<'listApprovals'>> {
    return this.request('GET', '/api/cdp/approvals', { query });
  }

  approveAuthorization(authorizationId: string, body: BodyOf<'approveAuthorization'> = {}, opts: CallOptions = {}): Promise<ResponseOf<'approveAuthorization'>> {
    return this.request('POST', path`/api/cdp/approvals/${authorizationId}/approve`, { body, ...opts });
  }

  rejectAuthorization(authorizationId: string, body: BodyOf<'rejectAuthorization'> = {}, opts: CallOptions = {}): Promise<ResponseOf<'rejectAuthorization'>> {
    return this.request('POST', path`/api/cdp/approvals/${authorizationId}/reject`, { body, ...opts });
  }

  /** The signed payment_receipt.v1; check it offline with verifyReceipt. */
  getReceipt(transactionId: string): Promise<ResponseOf<'getReceipt'>> {
    return this.request('GET', path`/api/cdp/receipts/${transactionId}`);
  }

  /** The server's check of a receipt or decision record (public). Offline: verifyReceipt. */
  verifyReceiptOnServer(receipt: BodyOf<'verifyReceiptOnServer'>): Promise<ResponseOf<'verifyReceiptOnServer'>> {
    return this.request('POST', '/api/cdp/receipts/verify', { body: receipt, ...READ_ONLY });
  }

  // ---- Webhooks (webhooks:manage).

  /** Registers an endpoint; the answer's `secret` (whsec_…) is shown this once. */
  createWebhookEndpoint(body: BodyOf<'createWebhookEndpoint'>): Promise<ResponseOf<'createWebhookEndpoint'>> {
    return this.request('POST', '/api/cdp/webhooks/endpoints', { body, ...ONCE });
  }

  listWebhookEndpoints(): Promise<ResponseOf<'listWebhookEndpoints'>> {
    return this.request('GET', '/api/cdp/webhooks/endpoints');
  }

  getWebhookEndpoint(endpointId: string): Promise<ResponseOf<'getWebhookEndpoint'>> {
    return this.request('GET', path`/api/cdp/webhooks/endpoints/${endpointId}`);
  }

  updateWebhookEndpoint(endpointId: string, body: BodyOf<'updateWebhookEndpoint'>): Promise<ResponseOf<'updateWebhookEndpoint'>> {
    return this.request('PATCH', path`/api/cdp/webhooks/endpoints/${endpointId}`, { body, ...SAME_RESULT });
  }

  async deleteWebhookEndpoint(endpointId: string): Promise<void> {
    await this.request('DELETE', path`/api/cdp/webhooks/endpoints/${endpointId}`, ONCE);
  }

  /** A new secret (shown once); the previous one keeps signing beside it for 24 h. */
  rotateWebhookSecret(endpointId: string): Promise<ResponseOf<'rotateWebhookSecret'>> {
    return this.request('POST', path`/api/cdp/webhooks/endpoints/${endpointId}/rotate-secret`, ONCE);
  }

  /** Sends a webhook.test ping through the normal delivery path. */
  testWebhookEndpoint(endpointId: string): Promise<ResponseOf<'testWebhookEndpoint'>> {
    return this.request('POST', path`/api/cdp/webhooks/endpoints/${endpointId}/test`, ONCE);
  }

  /** Re-sends every failed delivery of the endpoint created since then (same webhook-ids). */
  recoverWebhookDeliveries(endpointId: string, since: Date | string): Promise<ResponseOf<'recoverWebhookDeliveries'>> {
    const query: QueryOf<'recoverWebhookDeliveries'> = { since: since instanceof Date ? since.toISOString() : since };
    return this.request('POST', path`/api/cdp/webhooks/endpoints/${endpointId}/recover`, { query, ...ONCE });
  }

  listWebhookDeliveries(query: QueryOf<'listWebhookDeliveries'> = {}): Promise<ResponseOf<'listWebhookDeliveries'>> {
    return this.request('GET', '/api/cdp/webhooks/deliveries', { query });
  }

  /** One delivery with its payload and attempt history. */
  getWebhookDelivery(deliveryId: string): Promise<ResponseOf<'getWebhookDelivery'>> {
    return this.request('GET', path`/api/cdp/webhooks/deliveries/${deliveryId}`);
  }

  /** A new series of attempts for a finished delivery, with the same webhook-id. */
  redeliverWebhook(deliveryId: string): Promise<ResponseOf<'redeliverWebhook'>> {
    return this.request('POST', path`/api/cdp/webhooks/deliveries/${deliveryId}/redeliver`, ONCE);
  }


  // ---- People and console sessions (users:manage); API keys (keys:manage). A new key's secret and a sign-in link's `url` are shown once.
  listUsers(): Promise<ResponseOf<'listUsers'>> { return this.request('GET', '/api/users'); }
  inviteUser(body: BodyOf<'inviteUser'>): Promise<ResponseOf<'inviteUser'>> { return this.request('POST', '/api/users', { body, ...ONCE }); }
  getUser(userId: string): Promise<ResponseOf<'getUser'>> { return this.request('GET', path`/api/users/${userId}`); }
  changeUser(userId: string, body: BodyOf<'changeUser'>): Promise<ResponseOf<'changeUser'>> { return this.request('PATCH', path`/api/users/${userId}`, { body, ...SAME_RESULT }); }
  createSignInLink(userId: string): Promise<ResponseOf<'createSignInLink'>> { return this.request('POST', path`/api/users/${userId}/sign-in-links`, ONCE); }
  deactivateUser(userId: string): Promise<ResponseOf<'deactivateUser'>> { return this.request('POST', path`/api/users/${userId}/deactivate`, SAME_RESULT); }
  listSessions(query: QueryOf<'listSessions'> = {}): Promise<ResponseOf<'listSessions'>> { return this.request('GET', '/api/sessions', { query }); }
  createApiKey(body: BodyOf<'createApiKey'>): Promise<ResponseOf<'createApiKey'>> { return this.request('POST', '/api/keys', { body, ...ONCE }); }
  revokeApiKey(keyId: string): Promise<ResponseOf<'revokeApiKey'>> { return this.request('DELETE', path`/api/keys/${keyId}`, SAME_RESULT); }
  revokeSession(sessionId: string): Promise<ResponseOf<'revokeSession'>> { return this.request('DELETE', path`/api/sessions/${sessionId}`, SAME_RESULT); }
}
