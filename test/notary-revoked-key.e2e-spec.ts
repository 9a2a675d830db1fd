import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { EventStore, SqlDatabase } from '@app/event-store';
import { SigningKeyRepository, SigningKeyStore } from '@app/notary';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

/**
 * A process that has not heard yet that another one revoked the active signing key (its NOTIFY is
 * late) still signs with it: the issuance is refused as it is written, and the process answers
 * 200 with a certificate signed again under the key that replaced it. Nothing signed by the
 * revoked key is ever handed out.
 */
describe('issuance by a process whose signing keys are out of date (e2e)', () => {
  let t: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>> | undefined;
  beforeAll(async () => {
    // Its own schema in the PostgreSQL pass: it revokes signing keys.
    iso = await isolatedEnv();
    t = await startTestApp({ ...iso.env, TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await t?.close();
    await iso?.dispose();
  });

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const keyFor = async (app: TestApp) => {
    const access = app.app.get(AccessService);
    const org = await access.createOrganization(`revoked-${randomBytes(3).toString('hex')}`);
    return (await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' })).key;
  };
  const issue = (app: TestApp, key: string, content: string) =>
    app.app.inject({ method: 'POST', url: '/api/notary/create', headers: { 'x-forwarded-for': ip(), authorization: `Bearer ${key}` }, payload: { content } });
  const verify = async (app: TestApp, id: string) => (await app.app.inject({ method: 'POST', url: '/api/verify', headers: { 'x-forwarded-for': ip() }, payload: { certificate_id: id } })).json();
  const issuedUnder = async (app: TestApp, keyId: string) => {
    const [{ n }] = await app.app.get(SqlDatabase).query<{ n: string | number }>(
      `SELECT count(*) AS n FROM events WHERE type = 'certificate.issued' AND data->'manifest'->'signature'->>'key_id' = $1`,
      [keyId],
    );
    return Number(n);
  };
  /** Stops the process's ring from hearing changes, as if the other process's NOTIFY had not arrived yet. */
  const deafen = async (app: TestApp) => {
    const ring = app.app.get(SigningKeyStore);
    await ring.stop();
    return ring;
  };

  it('answers 200 with a certificate under the new active key, which verifies; the revoked key signed nothing', async () => {
    const ring = await deafen(t);
    const key = await keyFor(t);
    // Another process, on the same database, revokes the active key.
    const other = new SigningKeyStore(SigningKeyRepository.on(t.app.get(SqlDatabase), t.app.get(EventStore)), t.app.get<Buffer>(KEY_ENCRYPTION_KEY));
    await other.start();
    const compromised = ring.current.active().key_id;
    const { activated } = await other.revoke(compromised);
    await other.stop();
    expect(ring.current.active().key_id).toBe(compromised);

    const res = await issue(t, key, 'issued by a process that has not heard of the revocation');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.signing_key_id).toBe(activated!.key_id);
    expect(await verify(t, body.certificate_id)).toMatchObject({ verified: true, key_id: activated!.key_id });
    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json().keys as { key_id: string; status: string }[];
    expect(keys.find((k) => k.key_id === compromised)?.status).toBe('revoked');
    expect(await issuedUnder(t, compromised)).toBe(0);
  });
});
