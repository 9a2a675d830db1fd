import { randomBytes } from 'node:crypto';
import { AccessReadModel, AccessService, accessMigrations } from '@app/access';
import { openEventStore } from '@app/event-store';
import { startApiProcesses } from '../support/api-processes';
import { TEST_KEY_ENCRYPTION_KEY } from '../support/test-kek';

/**
 * Two api processes on one PostgreSQL and one Redis enforce each limit once between them:
 * with limit L, exactly L of 3L requests spread over both succeed.
 */
const url = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;
if (!url || !redisUrl) throw new Error('DATABASE_URL and REDIS_URL are required');

describe('limits shared by two api processes (PostgreSQL + Redis)', () => {
  let bases: string[] = [];
  let stop: () => Promise<void> = async () => undefined;
  const PER_KEY = 7;

  beforeAll(async () => {
    ({ bases, stop } = await startApiProcesses(2, {
      DATABASE_URL: url,
      REDIS_URL: redisUrl,
      KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
      TRUST_PROXY: 'true',
      RATE_LIMIT_KEY_PER_MINUTE: String(PER_KEY),
      WORKERS: 'off',
      LOG_LEVEL: 'warn',
    }));
  }, 90_000);

  afterAll(() => stop());

  const spread = async (n: number, path: string, init: (i: number) => RequestInit) =>
    Promise.all(Array.from({ length: n }, (_, i) => fetch(`${bases[i % 2]}${path}`, init(i)).then((r) => r.status)));

  it('mints exactly 3 sandbox keys out of 9 requests from one IP', async () => {
    const ip = `10.99.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    const statuses = await spread(9, '/api/sandbox/keys', () => ({ method: 'POST', headers: { 'x-forwarded-for': ip } }));
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
  });

  it('lets exactly L of 3L calls with one key through', async () => {
    const ip = `10.98.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    const minted = await fetch(`${bases[0]}/api/sandbox/keys`, { method: 'POST', headers: { 'x-forwarded-for': ip } });
    const { key } = (await minted.json()) as { key: string };
    const statuses = await spread(3 * PER_KEY, '/api/me', () => ({ headers: { authorization: `Bearer ${key}` } }));
    expect(statuses.filter((s) => s === 200)).toHaveLength(PER_KEY);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * PER_KEY);
  });

  it('revokes a key on both processes at once', async () => {
    const minted = await fetch(`${bases[1]}/api/sandbox/keys`, { method: 'POST', headers: { 'x-forwarded-for': `10.97.${randomBytes(1)[0]}.1` } });
    const { key, key_id } = (await minted.json()) as { key: string; key_id: string };
    const before = await Promise.all(bases.map((b) => fetch(`${b}/api/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)));
    expect(before).toEqual([200, 200]);
    // Revoke from a third process, as the admin CLI does.
    const { db, store } = await openEventStore({ databaseUrl: url, migrations: accessMigrations });
    await new AccessService(new AccessReadModel(db), store).revokeApiKey(key_id);
    await store.close();
    await db.close();
    const after = await Promise.all(bases.map((b) => fetch(`${b}/api/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)));
    expect(after).toEqual([401, 401]);
  });
});
