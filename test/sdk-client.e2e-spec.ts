import { randomBytes, createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { AccessService } from '@app/access';
import { manifestRoot, SigningKeyStore } from '@app/notary';
import { hashContent, SigilClient, SigilError, verifyCertificate, verifyPredictionProof, verifyReceipt, verifyTimeline } from '@app/sdk';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

/** The SDK's client against the running service over real HTTP (issue 7). */
describe('SDK client (e2e)', () => {
  let t: TestApp;
  let base: string;
  let sigil: SigilClient;
  let commerce: SigilClient;

  let iso: Awaited<ReturnType<typeof isolatedEnv>> | undefined;
  beforeAll(async () => {
    // Its own schema in the PostgreSQL pass: it rotates the signing key, which would change the key status other suites' answers name.
    iso = await isolatedEnv();
    t = await startTestApp(iso.env);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`sdk-${randomBytes(3).toString('hex')}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' });
    sigil = new SigilClient({ baseUrl: base, apiKey: key });
    const shop = await access.createOrganization(`sdk-shop-${randomBytes(3).toString('hex')}`);
    const shopKey = (await access.createApiKey(shop.org_id, { scopes: ['payments:write', 'payments:read', 'receipts:read'], mode: 'test' })).key;
    commerce = new SigilClient({ baseUrl: base, apiKey: shopKey });
    await commerce.request('PUT', '/api/cdp/policies/default', { body: { limits: { USD: { per_transaction_cents: 50_000 } }, purposes: { permitted: ['software'] } } });
  });
  afterAll(async () => {
    await t?.close();
    await iso?.dispose();
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

  it('issues, fetches and verifies a certificate offline; a tampered copy fails; the server agrees', async () => {
    const content = JSON.stringify([{ id: 1, label: 'cat' }, { id: 2, label: 'dog' }], null, 2);
    const issued = await sigil.issueCertificate({ content, filename: 'labels.json', artifact_type: 'dataset' });
    expect(issued).toMatchObject({ certificate_type: 'GENESIS', signature_alg: 'Ed25519', dataset_hash: hashContent(content) });

    const cert = await sigil.getCertificate(issued.certificate_id);
    const signed = await sigil.getSignedPayload(issued.certificate_id);
    const keys = await sigil.getSigningKeys();
    expect(cert.signature).toBe(issued.signature);
    expect(verifyCertificate(signed, keys, { artifactHash: hashContent(content) })).toMatchObject({
      valid: true,
      key_id: issued.signing_key_id,
      key_status: 'active',
      artifact_hash_match: true,
      certificate_id: issued.certificate_id,
    });
    expect(verifyCertificate(cert, keys)).toMatchObject({ valid: true });
    expect(verifyCertificate({ ...signed, payload: { ...signed.payload, rows: 3 } }, keys)).toMatchObject({ valid: false, reason: 'signature_invalid' });
    await expect(sigil.verifyCertificateLocally(issued.certificate_id)).resolves.toMatchObject({ valid: true });

    await expect(sigil.verify({ certificate_id: issued.certificate_id, artifact_hash: issued.dataset_hash })).resolves.toMatchObject({ verified: true, artifact_hash_match: true });
    await expect(sigil.verifyHash({ cert_id: issued.certificate_id, sha256: issued.dataset_hash })).resolves.toMatchObject({ verified: true, hash_matched: true });
    const byHash = await sigil.verifyHash({ hash: issued.dataset_hash });
    expect(byHash.certificates?.map((c) => c.certificate_id)).toContain(issued.certificate_id);

    // After a rotation the old key is retired and still verifies what it signed.
    await t.app.get(SigningKeyStore).rotate();
    await expect(sigil.verifyCertificateLocally(issued.certificate_id)).resolves.toMatchObject({ valid: true, key_status: 'retired' });
  });

  it('fetches a prediction inclusion proof that verifies against the certified manifest_hash', async () => {
    const hashes = ['a', 'b', 'c', 'd', 'e'].map((x) => `sha256:${createHash('sha256').update(x).digest('hex')}`);
    const manifest = {
      artifact_type: 'prediction_manifest',
      artifact_schema: 'prediction_manifest.v1',
      source: 'forecaster',
      period_start: '2026-11-01T00:00:00Z',
      period_end: '2026-11-02T00:00:00Z',
      prediction_hashes: hashes,
      manifest_hash: manifestRoot(hashes),
    };
    const issued = await sigil.issueCertificate({ content: JSON.stringify(manifest) });
    const signed = await sigil.getSignedPayload(issued.certificate_id);
    expect(verifyCertificate(signed, await sigil.getSigningKeys()).valid).toBe(true);
    const proof = await sigil.getPredictionProof(issued.certificate_id, hashes[3]);
    expect(verifyPredictionProof(proof, { manifestHash: String(signed.payload.manifest_hash) })).toMatchObject({ valid: true, warnings: [], leaf_index: 3, tree_size: 5 });
    expect(verifyPredictionProof(proof, { predictionHash: hashes[2], manifestHash: String(signed.payload.manifest_hash) })).toMatchObject({ valid: false, reason: 'leaf_mismatch' });
    expect(await failure(sigil.getPredictionProof(issued.certificate_id, `sha256:${'0'.repeat(64)}`))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('authorizes and settles with Idempotency-Keys, then verifies the receipt, the decision record and the timeline offline', async () => {
    const request = { amount_cents: 1_250, currency: 'USD', merchant_id: 'm_tools', purpose_tag: 'software', expiration_iso: new Date(Date.now() + 3_600_000).toISOString() };
    const decision = await commerce.authorize(request, { idempotencyKey: `order-${randomBytes(4).toString('hex')}` });
    expect(decision).toMatchObject({ decision: 'authorized', status: 'authorized' });
    const txn = decision.transaction_id;
    const executed = await commerce.executeTransaction(txn);
    expect(executed).toMatchObject({ outcome: 'succeeded' });

    const keys = await commerce.getSigningKeys();
    const receipt = await commerce.getReceipt(txn);
    expect(verifyReceipt(receipt, keys)).toMatchObject({ valid: true, key_status: 'active', schema_version: 'payment_receipt.v1' });
    expect(verifyReceipt({ ...receipt, payload: { ...receipt.payload, amount_cents: 99 } }, keys)).toMatchObject({ valid: false, reason: 'receipt_hash_mismatch' });
    expect(verifyReceipt(await commerce.getDecisionRecord(txn), keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: true, schema_version: 'payment_decision.v1' });

    const timeline = await commerce.getTransactionEvents(txn);
    expect(timeline.events.map((e) => e.event_type)).toEqual(['authorization.requested', 'authorization.approved', 'execution.initiated', 'execution.succeeded', 'receipt.issued', 'timeline.anchored']);
    const anchored = verifyTimeline(timeline, { includesHash: String(receipt.payload.timeline_last_event_hash), keys, expectedStatus: (await commerce.getTransaction(txn)).status });
    expect(anchored).toMatchObject({ valid: true, events: 6, stream_id: `transaction-${txn}`, anchor: { state: 'anchored', terminal_status: 'receipt_issued', key_status: 'active' } });
    expect(timeline).toMatchObject({ chain_valid: true, anchor: { state: 'anchored' } });
    // Without its anchor the settled timeline is cut short, and says so.
    expect(verifyTimeline({ ...timeline, events: timeline.events.slice(0, 5) }, { keys })).toMatchObject({ valid: false, reason: 'anchor_missing' });
    expect(timeline.events[4].stored.data).toMatchObject({ receipt_hash: receipt.receipt_hash });
    const shown = JSON.parse(JSON.stringify(timeline));
    shown.events[3].metadata.amount_cents = 1;
    expect(verifyTimeline(shown)).toMatchObject({ valid: false, reason: 'view_mismatch', field: 'metadata', broken_at_revision: 3 });
    const rewritten = JSON.parse(JSON.stringify(timeline));
    rewritten.events[1].stored.data.decision = 'needs_review';
    expect(verifyTimeline(rewritten)).toMatchObject({ valid: false, reason: 'hash_mismatch', broken_at_revision: 1 });

    // The same logical authorize, retried with its key, answers the same transaction.
    const key = `order-${randomBytes(4).toString('hex')}`;
    const first = await commerce.authorize(request, { idempotencyKey: key });
    await expect(commerce.authorize(request, { idempotencyKey: key })).resolves.toMatchObject({ transaction_id: first.transaction_id });
  });

  it('lists the registry and reads the quota in each lane', async () => {
    const page = await sigil.listRegistry({ limit: 5 });
    expect(page).toMatchObject({ items: expect.any(Array), total: expect.any(Number) });
    expect('next_cursor' in page).toBe(true);
    await expect(sigil.getQuota()).resolves.toMatchObject({ lane: 'authenticated' });
    const anonymous = new SigilClient({ baseUrl: base });
    await expect(anonymous.getQuota()).resolves.toMatchObject({ lane: 'anonymous' });
    await expect(anonymous.getQuota({ agentDid: 'did:cd:agent:sdk-e2e' })).resolves.toMatchObject({ lane: 'agent', did_status: 'did_accepted' });
  });

  it('surfaces the service’s errors as SigilError with code, status and request id', async () => {
    const missing = await failure(sigil.getCertificate('00000000-0000-4000-8000-000000000000'));
    expect(missing).toMatchObject({ status: 404, code: 'not_found', retryable: false, attempts: 1 });
    expect(missing.requestId).toEqual(expect.any(String));
    expect(await failure(sigil.getCertificate('not-a-uuid'))).toMatchObject({ status: 400, code: 'validation_failed' });
    const anonymous = new SigilClient({ baseUrl: base });
    expect(await failure(anonymous.issueCertificate({ content: 'x' }))).toMatchObject({ status: 401, code: 'auth_required' });
    expect(await failure(sigil.request('POST', '/api/notary/create', { body: { filename: 'x' } }))).toMatchObject({ status: 400, code: 'content_required' });
  });

  it('honours the real Retry-After on 429 and stops after 6 attempts', async () => {
    const sleeps: number[] = [];
    const agent = new SigilClient({ baseUrl: base, headers: { 'x-agent-did': 'did:cd:agent:sdk-hammer' }, sleep: async (ms) => void sleeps.push(ms), random: () => 0 });
    let limited: SigilError | null = null;
    for (let i = 0; i < 400 && !limited; i++) {
      try {
        await agent.listRegistry({ limit: 1 });
      } catch (err) {
        limited = err as SigilError;
      }
    }
    expect(limited).toMatchObject({ status: 429, code: 'rate_limited', retryable: true, attempts: 6 });
    expect(sleeps).toHaveLength(5);
    // random() = 0: no jitter, so each wait is exactly the whole seconds Retry-After named.
    for (const ms of sleeps) {
      expect(ms).toBeGreaterThanOrEqual(1000);
      expect(ms % 1000).toBe(0);
    }
    expect(sleeps[sleeps.length - 1]).toBeGreaterThanOrEqual(limited!.retryAfterMs!);
  });
});
