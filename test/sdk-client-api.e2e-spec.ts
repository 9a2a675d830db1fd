import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { AccessService, SCOPES, Scope } from '@app/access';
import { manifestRoot } from '@app/notary';
import { hashContent, SigilClient, SigilError, verifyCertificate, verifyPredictionProof, verifyReceipt, verifyTimeline, verifyWebhook } from '@app/sdk';
import { ConformanceRecorder, OpenApiDocument } from './support/openapi-conformance';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Every method of the SDK's client against the running service over real HTTP, each exchange
 * checked against the service's OpenAPI document (the one the client's types are generated
 * from): request bodies and answers must be exactly what the document says.
 */
describe('SDK client: every endpoint (e2e)', () => {
  let t: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;
  let receiver: WebhookReceiver;
  let base: string;
  let document: OpenApiDocument;
  let recorder: ConformanceRecorder;
  let sigil: SigilClient;
  let anonymous: SigilClient;
  let orgId: string;
  let keyId: string;

  beforeAll(async () => {
    iso = await isolatedEnv();
    receiver = await new WebhookReceiver().start();
    t = await startTestApp({ ...iso.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '100,200', WEBHOOK_TIMEOUT_MS: '3000', RATE_LIMITS: 'off' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    document = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDocument;
    recorder = new ConformanceRecorder(document);
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`sdk-api-${randomBytes(3).toString('hex')}`);
    orgId = org.org_id;
    const created = await access.createApiKey(org.org_id, { scopes: [...SCOPES] as Scope[], mode: 'test', name: 'sdk-e2e' });
    keyId = created.key_id;
    sigil = new SigilClient({ baseUrl: base, apiKey: created.key, fetch: recorder.fetch });
    anonymous = new SigilClient({ baseUrl: base, fetch: recorder.fetch });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await iso?.dispose();
  });

  // Whatever a test did, every exchange conformed to the document.
  afterEach(() => {
    expect(recorder.problems).toEqual([]);
  });

  const failure = async (p: Promise<unknown>): Promise<SigilError> => {
    try {
      await p;
    } catch (err) {
      expect(err).toBeInstanceOf(SigilError);
      return err as SigilError;
    }
    throw new Error('expected the call to fail');
  };

  const until = async <T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const v = await read();
      if (done(v)) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('certificates: issue, read in every form, verify on the server and offline, prove a prediction, buy credits', async () => {
    const content = JSON.stringify([{ id: 1, label: 'cat' }], null, 2);
    const issued = await sigil.issueCertificate({ content, filename: 'labels.json', artifact_type: 'dataset' });
    expect(issued).toMatchObject({ certificate_type: 'GENESIS', dataset_hash: hashContent(content), verify_url: expect.stringContaining(issued.certificate_id) });
    const id = issued.certificate_id;

    const keys = await anonymous.getSigningKeys();
    const signed = await anonymous.getSignedPayload(id);
    expect(await anonymous.getManifest(id)).toEqual(signed);
    expect(await anonymous.downloadCertificate(id)).toEqual(signed);
    const cert = await anonymous.getCertificate(id);
    expect(cert).toMatchObject({ certification_id: id, rows: 1, columns: 2, signature: issued.signature });
    expect(verifyCertificate(signed, keys, { artifactHash: hashContent(content) })).toMatchObject({ valid: true, artifact_hash_match: true });
    expect(verifyCertificate(cert, keys)).toMatchObject({ valid: true });

    await expect(anonymous.verify({ certificate_id: id, artifact_hash: issued.dataset_hash })).resolves.toMatchObject({ verified: true, artifact_hash_match: true });
    await expect(anonymous.verifyHash({ cert_id: id, sha256: issued.dataset_hash })).resolves.toMatchObject({ verified: true, hash_matched: true });
    await expect(anonymous.verifyHash({ hash: issued.dataset_hash })).resolves.toMatchObject({ verified: true, certificates: [expect.objectContaining({ certificate_id: id })] });
    await expect(anonymous.getVerificationReport(id)).resolves.toMatchObject({ verified: true, checks: { signature: 'valid', canonical_payload_hash: verifyCertificate(signed, keys).payload_hash } });
    await expect(anonymous.verifyCertificateLocally(id)).resolves.toMatchObject({ valid: true, key_status: 'active' });
    await expect(anonymous.getBadge(id)).resolves.toMatchObject({ schemaVersion: 1, state: 'verified', message: 'verified', certificate_id: id });
    const sandbox = await anonymous.generateSandboxDataset();
    expect(sandbox).toMatchObject({ dataset: { content_type: 'text/csv' }, certificate: { dataset_hash: hashContent(sandbox.dataset.content) } });

    const hashes = ['p1', 'p2', 'p3'].map((x) => `sha256:${createHash('sha256').update(x).digest('hex')}`);
    const manifest = await sigil.issueCertificate({
      content: JSON.stringify({
        artifact_type: 'prediction_manifest',
        artifact_schema: 'prediction_manifest.v1',
        source: 'sdk-e2e',
        period_start: '2026-11-01T00:00:00Z',
        period_end: '2026-11-02T00:00:00Z',
        prediction_hashes: hashes,
        manifest_hash: manifestRoot(hashes),
      }),
    });
    const proof = await anonymous.getPredictionProof(manifest.certificate_id, hashes[1]);
    expect(verifyPredictionProof(proof, { manifestHash: manifestRoot(hashes) })).toMatchObject({ valid: true, leaf_index: 1, tree_size: 3 });

    // The 3 free issuances are used: the 4th is the paywall, until credits are bought (once per Idempotency-Key).
    await sigil.issueCertificate({ content: 'third' });
    expect(await failure(sigil.issueCertificate({ content: 'fourth' }))).toMatchObject({ status: 402, code: 'notary_paywall', retryable: false, attempts: 1 });
    const checkoutKey = `credits-${randomBytes(4).toString('hex')}`;
    const bought = await sigil.buyNotaryCredits({ credits: 2 }, { idempotencyKey: checkoutKey });
    expect(bought).toMatchObject({ status: 'completed', credits: 2, amount_cents: 200, credits_purchased_total: 2 });
    await expect(sigil.buyNotaryCredits({ credits: 2 }, { idempotencyKey: checkoutKey })).resolves.toMatchObject({ checkout_id: bought.checkout_id, credits_purchased_total: 2 });
    await expect(sigil.issueCertificate({ content: 'fourth' })).resolves.toMatchObject({ certificate_type: 'GENESIS' });
  });

  it('registry: register, publish, list', async () => {
    const tag = `sdk-${randomBytes(3).toString('hex')}`;
    const { id } = await sigil.registerArtifact({ title: 'SDK artifact', artifact_type: 'model', tags: [tag] });
    await expect(sigil.updateRegistryEntry(id, { summary: 'listed by the SDK test', visibility: 'public' })).resolves.toEqual({ id });
    // The registry is a projection: the entry shows up moments later.
    const page = await until(() => anonymous.listRegistry({ q: tag, limit: 10 }), (p) => p.items.some((e) => e.id === id && e.visibility === 'public'), 'the registry entry');
    expect(page.items.find((e) => e.id === id)).toMatchObject({ title: 'SDK artifact', status: 'unverified', summary: 'listed by the SDK test', tags: [tag] });
    await expect(sigil.listRegistry({ visibility: 'private', limit: 200 })).resolves.toMatchObject({ items: expect.any(Array), next_cursor: null });
    expect(await failure(anonymous.listRegistry({ visibility: 'private' }))).toMatchObject({ status: 401, code: 'auth_required' });
  });

  it('access: sandbox key, the calling key, the organization’s keys, quota', async () => {
    const sandbox = await anonymous.createSandboxKey();
    expect(sandbox).toMatchObject({ key: expect.stringMatching(/^cdp_test_/), mode: 'test', sandbox: true });
    await expect(new SigilClient({ baseUrl: base, apiKey: sandbox.key, fetch: recorder.fetch }).getMe()).resolves.toMatchObject({ org_id: sandbox.org_id, lane: 'authenticated' });
    await expect(sigil.getMe()).resolves.toMatchObject({ org_id: orgId, key_id: keyId, mode: 'test' });
    const { keys } = await sigil.listApiKeys();
    expect(keys.map((k) => k.key_id)).toContain(keyId);
    await expect(sigil.getApiKey(keyId)).resolves.toMatchObject({ key_id: keyId, status: 'active', name: 'sdk-e2e' });
    await expect(sigil.getQuota()).resolves.toMatchObject({ lane: 'authenticated', schema_version: 'service.quota.v1' });
    await expect(anonymous.getQuota({ agentDid: 'did:cd:agent:sdk-api' })).resolves.toMatchObject({ lane: 'agent', did_status: 'did_accepted' });
  });

  it('commerce: policy versions, authorize, settle, review, prove; webhooks: endpoints, deliveries, redelivery, recovery', async () => {
    const ok = receiver.route('sdk-ok');
    const gone = receiver.route('sdk-refuses', () => ({ status: 400 }));
    const endpoint = await sigil.createWebhookEndpoint({ url: ok.url, description: 'sdk e2e' });
    expect(endpoint).toMatchObject({ url: ok.url, enabled: true, secret: expect.stringMatching(/^whsec_/) });
    const refusing = await sigil.createWebhookEndpoint({ url: gone.url, event_types: ['receipt.issued'] });
    await expect(sigil.listWebhookEndpoints()).resolves.toMatchObject({ items: expect.arrayContaining([expect.objectContaining({ id: endpoint.id })]) });
    await expect(sigil.updateWebhookEndpoint(endpoint.id, { description: 'renamed' })).resolves.toMatchObject({ id: endpoint.id, description: 'renamed' });
    await expect(sigil.getWebhookEndpoint(endpoint.id)).resolves.toMatchObject({ description: 'renamed' });
    const rotated = await sigil.rotateWebhookSecret(endpoint.id);
    expect(rotated).toMatchObject({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/) });

    const policy = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } }, purposes: { permitted: ['software'] } };
    await expect(sigil.putPolicy('default', policy)).resolves.toMatchObject({ version: 1, recorded: true });
    await expect(sigil.putPolicy('default', policy)).resolves.toMatchObject({ version: 1, recorded: false });
    await expect(sigil.getPolicy('default')).resolves.toMatchObject({ version: 1, policy });
    await expect(sigil.listPolicyVersions('default')).resolves.toMatchObject({ versions: [expect.objectContaining({ version: 1 })] });
    await expect(sigil.getPolicyVersion('default', 1)).resolves.toMatchObject({ policy_id: 'default', version: 1 });
    const expiration_iso = new Date(Date.now() + 3_600_000).toISOString();
    const request = { amount_cents: 1_250, currency: 'USD', merchant_id: 'm_tools', purpose_tag: 'software', expiration_iso };
    await expect(sigil.simulatePolicy('default', request)).resolves.toMatchObject({ decision: 'authorized', reason_code: null });
    await expect(sigil.quotePayment(request)).resolves.toMatchObject({ quoted: true, decision: 'authorized', reason_code: null });
    await expect(sigil.demoDecision(request)).resolves.toMatchObject({ demo: true, decision_record: { schema_version: 'payment_decision.v1' } });

    const decision = await sigil.authorize(request);
    expect(decision).toMatchObject({ decision: 'authorized', status: 'authorized' });
    const txn = decision.transaction_id;
    const executed = await sigil.executeTransaction(txn);
    expect(executed).toMatchObject({ outcome: 'succeeded', transaction: { transaction_id: txn, status: 'receipt_issued' } });
    await expect(sigil.getTransaction(txn)).resolves.toMatchObject({ status: 'receipt_issued', amount_cents: 1_250 });
    await expect(sigil.listTransactions({ merchant_id: 'm_tools' })).resolves.toMatchObject({ items: [expect.objectContaining({ transaction_id: txn })] });
    await expect(sigil.replayTransaction(txn)).resolves.toMatchObject({ reproduced: true, recorded: { decision: 'authorized' } });

    const keys = await sigil.getSigningKeys();
    const receipt = await sigil.getReceipt(txn);
    expect(verifyReceipt(receipt, keys)).toMatchObject({ valid: true });
    expect(verifyReceipt(await sigil.getDecisionRecord(txn), keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: true, schema_version: 'payment_decision.v1' });
    await expect(anonymous.verifyReceiptOnServer(receipt)).resolves.toMatchObject({ verified: true, transaction_id: txn });
    await expect(anonymous.verifyReceiptOnServer({ receipt })).resolves.toMatchObject({ verified: true });
    const timeline = await sigil.getTransactionEvents(txn);
    expect(timeline.chain_valid).toBe(true);
    expect(verifyTimeline(timeline, { includesHash: receipt.payload.timeline_last_event_hash, keys })).toMatchObject({ valid: true, events: 6, anchor: { state: 'anchored' } });
    // The receipt ends it: the timeline's signed anchor verifies on the server too.
    await expect(anonymous.verifyReceiptOnServer(timeline.anchor.record!)).resolves.toMatchObject({ verified: true, schema_version: 'payment_timeline_anchor.v1', transaction_id: txn });

    // Above the review threshold: the approval queue, then a human decision either way.
    const big = { ...request, amount_cents: 30_000 };
    const [toApprove, toReject] = [await sigil.authorize(big), await sigil.authorize(big)];
    expect(toApprove).toMatchObject({ decision: 'needs_review', reason_code: 'REVIEW_REQUIRED' });
    const queue = await sigil.listApprovals({ merchant_id: 'm_tools' });
    expect(queue.items.map((i) => i.authorization_id)).toEqual(expect.arrayContaining([toApprove.authorization_id, toReject.authorization_id]));
    await expect(sigil.approveAuthorization(toApprove.authorization_id, { amount_cents: 25_000, note: 'ok, less' })).resolves.toMatchObject({ status: 'authorized', approved_amount_cents: 25_000 });
    await expect(sigil.rejectAuthorization(toReject.authorization_id, { note: 'no' })).resolves.toMatchObject({ status: 'rejected' });

    // Deliveries of those events reach the receiver, signed; the refusing endpoint's fail at once.
    const test = await sigil.testWebhookEndpoint(endpoint.id);
    expect(test).toMatchObject({ status: 'pending' });
    const delivered = await until(() => sigil.getWebhookDelivery(test.delivery_id), (d) => d.status !== 'pending', 'the test delivery');
    expect(delivered).toMatchObject({ status: 'delivered', event_type: 'webhook.test', payload: { event_type: 'webhook.test' }, attempt_history: [expect.objectContaining({ status_code: 204 })] });
    const arrived = receiver.on(ok.path).find((r) => r.headers['webhook-id'] === test.webhook_id)!;
    expect(verifyWebhook(arrived.body, arrived.headers as Record<string, string>, rotated.secret)).toMatchObject({ valid: true, id: test.webhook_id });

    const failed = await until(() => sigil.listWebhookDeliveries({ endpoint_id: refusing.id }), (p) => p.items.length === 1 && p.items[0].status === 'failed', 'the refused delivery');
    expect(failed.items[0]).toMatchObject({ event_type: 'receipt.issued', transaction_id: txn, last_status_code: 400 });
    await expect(sigil.listWebhookDeliveries({ status: 'delivered', limit: 200 })).resolves.toMatchObject({ items: expect.arrayContaining([expect.objectContaining({ id: test.delivery_id })]) });
    const again = await sigil.redeliverWebhook(test.delivery_id);
    expect(again).toMatchObject({ id: test.delivery_id, webhook_id: test.webhook_id, status: 'pending', series: 2 });
    await until(() => sigil.getWebhookDelivery(test.delivery_id), (d) => d.status === 'delivered' && d.series === 2, 'the redelivery');
    await expect(sigil.recoverWebhookDeliveries(refusing.id, new Date(Date.now() - 3_600_000))).resolves.toMatchObject({ endpoint_id: refusing.id, recovered: 1 });
    await until(() => sigil.getWebhookDelivery(failed.items[0].id), (d) => d.status === 'failed' && d.series === 2, 'the recovered delivery');

    await expect(sigil.deleteWebhookEndpoint(refusing.id)).resolves.toBeUndefined();
    expect(await failure(sigil.getWebhookEndpoint(refusing.id))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('people: invites a person, reads, changes, issues a link; lists and revokes their console session', async () => {
    const invited = await sigil.inviteUser({ email: `sdk-${randomBytes(4).toString('hex')}@example.com`, display_name: 'SDK person', role: 'viewer' });
    expect(invited).toMatchObject({ delivered_to: 'issuer', url: expect.stringMatching(/\/console\/sign-in\/link\?token=sgl_[0-9a-f]{64}$/) });
    const userId = invited.user.user_id;
    expect((await sigil.listUsers()).users.map((u) => u.user_id)).toContain(userId);
    await expect(sigil.getUser(userId)).resolves.toMatchObject({ role: 'viewer', has_password: false });
    await expect(sigil.changeUser(userId, { role: 'reviewer' })).resolves.toMatchObject({ role: 'reviewer' });
    // A new link for someone else goes to them (the server log), not to the key that asked.
    const link = await sigil.createSignInLink(userId);
    expect(link).toMatchObject({ delivered_to: 'user', user: { user_id: userId } });
    expect(link.url).toBeUndefined();
    // The person opens their invitation's link in the console (a form post with the sign-in form's token): a session.
    const csrf = randomBytes(16).toString('hex');
    const signIn = await fetch(`${base}/console/sign-in/link`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `sigil_signin=${csrf}` },
      body: new URLSearchParams({ csrf, token: new URL(invited.url!).searchParams.get('token')! }),
    });
    expect(signIn.status).toBe(303);
    const { sessions } = await sigil.listSessions({ user_id: userId });
    expect(sessions).toEqual([expect.objectContaining({ user_id: userId, method: 'link', status: 'active' })]);
    await expect(sigil.revokeSession(sessions[0].session_id)).resolves.toMatchObject({ status: 'revoked' });
    await expect(sigil.deactivateUser(userId)).resolves.toMatchObject({ user_id: userId, deactivated_at: expect.any(String) });
    expect(await failure(sigil.getUser('usr_000000000000000000000000'))).toMatchObject({ status: 404, code: 'not_found' });

    const made = await sigil.createApiKey({ scopes: ['payments:read'], mode: 'test', name: 'sdk-made' });
    expect(made).toMatchObject({ key: expect.stringMatching(/^cdp_test_/), scopes: ['payments:read'], name: 'sdk-made' });
    await expect(sigil.revokeApiKey(made.key_id)).resolves.toMatchObject({ key_id: made.key_id, status: 'revoked' });
  });

  it('has one method per operation of the document, and every one of them was called with success', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.values(item)
        .filter(() => path !== '/healthz' && path !== '/readyz' && !path.startsWith('/verify/'))
        .map((op) => op.operationId),
    );
    const methods = Object.getOwnPropertyNames(SigilClient.prototype).filter((m) => m !== 'constructor' && m !== 'verifyCertificateLocally');
    expect([...methods].sort()).toEqual([...operations].sort());
    expect([...recorder.succeeded].sort()).toEqual([...operations].sort());
  });
});
