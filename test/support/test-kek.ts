import { createHash } from 'node:crypto';

/**
 * One key-encryption key for every process the tests start. In the PostgreSQL pass they share
 * the `test` database, and with it the signing keys sealed under this key, across runs too.
 */
export const TEST_KEY_ENCRYPTION_KEY = createHash('sha256').update('sigil test key-encryption key').digest('base64');
