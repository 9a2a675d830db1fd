import { randomBytes } from 'node:crypto';
import { AccessReadModel, AccessService, accessMigrations } from '@app/access';
import { openEventStore } from '@app/event-store';
import { startApiProcesses } from '../support/api-processes';
import { TEST_KEY_ENCRYPTION_KEY } from '../support/test-kek';

/**
 * Two api processes on one PostgreSQL: a spend cap is never overshot and one idempotency key
 * creates one transaction, whichever process each request lands on.
 */
const url = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;
if (!url || !redisUrl) throw new Error('DATABASE_URL and REDIS_URL are required');

describe('commerce across two api processes (PostgreSQL)', () => {
  let bases: string[] = [];
  let stop: () => Promise<void> = async () => undefined;
  let key: string;

  beforeAll(async () => {
    ({ bases, stop } = await startApiProcesses(2, { DATABASE_URL: url, REDIS_URL: redisUrl, KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY, RATE_LIMITS: 'off', WORKERS: 'off', LOG_LEVEL: 'warn' }));
    const { db, store } = await openEventStore({ databaseUrl: url, migrations: accessMigrations });
    const access = new AccessService(new AccessReadModel(db), store);
    const org = await access.createOrganization(`two-proc-${randomBytes(3).toString('hex')}`);
    key = (await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read'], mode: 'test' })).key;
    await store.close();
    await db.close();
    const put = await fetch(`${bases[0]}/api/cdp/policies/default`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limits: { USD: { per_transaction_cents: 5_000 } }, spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 100_000 }] }),
    });
    expect(put.status).toBe(200);
  }, 120_000);

  afterAll(() => stop());

  const expires = new Date(Date.now() + 3600_000).toISOString();
  const authorize = (i: number, headers: Record<string, string> = {}, amount = 1_000) =>
    fetch(`${bases[i % 2]}/api/cdp/authorize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ amount_cents: amount, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: expires }),
    });

  it('200 parallel authorizations of 10.00 against a 1,000.00 daily cap, over both processes, authorize exactly 100', async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => authorize(i)));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const decisions = (await Promise.all(responses.map((r) => r.json()))) as Array<{ decision: string; reason_code: string | null }>;
    expect(decisions.filter((d) => d.decision === 'authorized')).toHaveLength(100);
    expect(decisions.filter((d) => d.decision === 'blocked').every((d) => d.reason_code === 'SPEND_CAP_EXCEEDED')).toBe(true);
  }, 120_000);

  it('50 parallel requests with one idempotency key, over both processes, create one transaction and all answer it', async () => {
    const idem = `two-proc-${randomBytes(6).toString('hex')}`;
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => authorize(i, { 'idempotency-key': idem }, 100)));
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Array<{ transaction_id?: string; error?: string }>;
    expect(responses.map((r, i) => `${r.status} ${bodies[i].error ?? ""}`).filter((s) => !s.startsWith("200"))).toEqual([]);
    expect(new Set(bodies.map((b) => b.transaction_id)).size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    const list = await fetch(`${bases[1]}/api/cdp/transactions?limit=200&merchant_id=m_books`, { headers: { authorization: `Bearer ${key}` } });
    const items = ((await list.json()) as { items: Array<{ transaction_id: string; amount_cents: number }> }).items.filter((t) => t.amount_cents === 100);
    expect(items).toHaveLength(1);
  }, 120_000);
});
