import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AppConfig } from './config';
import { ConfigError } from './config';

/**
 * The key that encrypts signing keys at rest. Taken from KEY_ENCRYPTION_KEY; in embedded mode
 * generated once and kept in DATA_DIR (mode 0600). With PostgreSQL it must be given: processes
 * sharing a database must share it, and it must not live beside the data it protects.
 */
export function resolveKeyEncryptionKey(config: Pick<AppConfig, 'DATA_DIR' | 'storeMode'> & { KEY_ENCRYPTION_KEY?: string }): Buffer {
  if (config.KEY_ENCRYPTION_KEY) return Buffer.from(config.KEY_ENCRYPTION_KEY, 'base64');
  if (config.storeMode !== 'embedded') {
    throw new ConfigError([{ variable: 'KEY_ENCRYPTION_KEY', message: 'is required when DATABASE_URL is set (32 bytes, base64)' }]);
  }
  const dir = resolve(config.DATA_DIR);
  const file = join(dir, 'key-encryption-key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new ConfigError([{ variable: 'KEY_ENCRYPTION_KEY', message: `${file} does not hold 32 base64 bytes` }]);
    return key;
  }
  mkdirSync(dir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return key;
}
