import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';
import { resolveKeyEncryptionKey } from './key-encryption-key';

const variablesOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => i.variable);
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('defaults to embedded mode on port 3000 with no variables set', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 3000, BASE_URL: 'http://localhost:3000', DATA_DIR: './data', LOG_LEVEL: 'info', WORKERS: 'on', storeMode: 'embedded' });
    expect(c.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it('switches to postgres when DATABASE_URL is set, and derives BASE_URL from PORT', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db', PORT: '8080' });
    expect(c.storeMode).toBe('postgres');
    expect(c.BASE_URL).toBe('http://localhost:8080');
    expect(loadConfig({ BASE_URL: 'https://sigil.example/' }).BASE_URL).toBe('https://sigil.example');
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', REDIS_URL: '', PORT: '' })).toMatchObject({ storeMode: 'embedded', PORT: 3000 });
  });

  it('parses booleans strictly', () => {
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' }).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(variablesOf(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' }))).toEqual(['WEBHOOK_ALLOW_PRIVATE_TARGETS']);
  });

  it('reads the webhook settings, with the delivery schedule of DESIGN.md by default', () => {
    expect(loadConfig({})).toMatchObject({
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_RETRY_SCHEDULE_MS: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      WEBHOOK_DISABLE_AFTER_DAYS: 5,
      WEBHOOK_QUEUE_PREFIX: 'sigil',
    });
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '100, 200,400', WEBHOOK_DISABLE_AFTER_DAYS: '0.5' })).toMatchObject({
      WEBHOOK_RETRY_SCHEDULE_MS: [100, 200, 400],
      WEBHOOK_DISABLE_AFTER_DAYS: 0.5,
    });
    for (const [variable, value] of [
      ['WEBHOOK_RETRY_SCHEDULE_MS', '100,,200'],
      ['WEBHOOK_RETRY_SCHEDULE_MS', '-5'],
      ['WEBHOOK_RETRY_SCHEDULE_MS', '1s'],
      ['WEBHOOK_TIMEOUT_MS', '0'],
      ['WEBHOOK_DISABLE_AFTER_DAYS', '0'],
      ['WEBHOOK_QUEUE_PREFIX', 'a:b'],
    ]) {
      expect(variablesOf(() => loadConfig({ [variable]: value }))).toEqual([variable]);
    }
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '3.5'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['BASE_URL', 'ftp://x'],
    ['KEY_ENCRYPTION_KEY', Buffer.alloc(16).toString('base64')],
    ['LOG_LEVEL', 'verbose'],
    ['WORKERS', 'yes'],
    ['BODY_LIMIT_BYTES', '10'],
    ['METRICS_PORT', '70000'],
    ['METRICS_PORT', 'metrics'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'has a space in it somewhere'],
  ])('rejects %s=%s, naming the variable', (variable, value) => {
    expect(variablesOf(() => loadConfig({ [variable]: value }))).toEqual([variable]);
  });

  it('leaves metrics unserved by default, and reads METRICS_PORT and METRICS_TOKEN', () => {
    const none = loadConfig({});
    expect([none.METRICS_PORT, none.METRICS_TOKEN]).toEqual([undefined, undefined]);
    const set = loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'abcdefghijklmnop' });
    expect([set.METRICS_PORT, set.METRICS_TOKEN]).toEqual([9464, 'abcdefghijklmnop']);
  });

  it('reads TRUST_PROXY as the number of proxies in front (true: one), never "trust every hop"', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(0);
    for (const [value, hops] of [['false', 0], ['off', 0], ['0', 0], ['true', 1], ['yes', 1], ['1', 1], ['2', 2]] as const) {
      expect([value, loadConfig({ TRUST_PROXY: value }).TRUST_PROXY]).toEqual([value, hops]);
    }
    for (const value of ['maybe', '-1', '1.5', '100']) expect(variablesOf(() => loadConfig({ TRUST_PROXY: value }))).toEqual(['TRUST_PROXY']);
  });

  it('reads TRUST_PROXY as the proxies\' addresses and CIDRs when it lists them', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8, ::1' }).TRUST_PROXY).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
    for (const value of ['10.0.0.0/33', '10.0.0/8', '10.0.0.1,', 'fd00::/129', '0x7f.0.0.1', '10.0.0.1/8/8', 'example.com']) {
      expect([value, variablesOf(() => loadConfig({ TRUST_PROXY: value }))]).toEqual([value, ['TRUST_PROXY']]);
    }
  });

  it('names every bad variable at once', () => {
    expect(variablesOf(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'y' })).sort()).toEqual(['LOG_LEVEL', 'PORT']);
  });
});

describe('resolveKeyEncryptionKey', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sigil-kek-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses KEY_ENCRYPTION_KEY when given', () => {
    const key = Buffer.alloc(32, 7);
    expect(resolveKeyEncryptionKey({ KEY_ENCRYPTION_KEY: key.toString('base64'), DATA_DIR: dir, storeMode: 'postgres' })).toEqual(key);
  });

  it('generates one in embedded mode, keeps it in DATA_DIR with mode 0600, and reuses it', () => {
    const first = resolveKeyEncryptionKey({ DATA_DIR: dir, storeMode: 'embedded' });
    expect(first).toHaveLength(32);
    const file = join(dir, 'key-encryption-key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toEqual(first);
    expect(resolveKeyEncryptionKey({ DATA_DIR: dir, storeMode: 'embedded' })).toEqual(first);
  });

  it('requires it with PostgreSQL', () => {
    expect(variablesOf(() => resolveKeyEncryptionKey({ DATA_DIR: dir, storeMode: 'postgres' }))).toEqual(['KEY_ENCRYPTION_KEY']);
  });

  it('refuses a damaged key file', () => {
    writeFileSync(join(dir, 'key-encryption-key'), 'c2hvcnQ=\n');
    expect(variablesOf(() => resolveKeyEncryptionKey({ DATA_DIR: dir, storeMode: 'embedded' }))).toEqual(['KEY_ENCRYPTION_KEY']);
  });
});
