import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys: `cdp_live_<64 hex>` or `cdp_test_<64 hex>`, 256 bits from the CSPRNG. The first 16
 * hex digits are the key id's suffix (a non-secret lookup prefix, shown in lists); the server
 * stores only SHA-256 of the whole key. A slow hash adds nothing for 256-bit random secrets.
 */
export type KeyMode = 'live' | 'test';

const KEY_RE = /^cdp_(live|test)_([0-9a-f]{64})$/;
const LOOKUP_HEX = 16;

export interface ParsedApiKey {
  mode: KeyMode;
  keyId: string;
  secret: string;
}

export interface NewApiKey extends ParsedApiKey {
  secretHash: string;
}

export const keyIdFor = (lookup: string) => `key_${lookup}`;

export function generateApiKey(mode: KeyMode): NewApiKey {
  const hex = randomBytes(32).toString('hex');
  const secret = `cdp_${mode}_${hex}`;
  return { mode, keyId: keyIdFor(hex.slice(0, LOOKUP_HEX)), secret, secretHash: hashApiKey(secret) };
}

/** Null for anything that is not exactly a well-formed key. */
export function parseApiKey(value: string): ParsedApiKey | null {
  const m = KEY_RE.exec(value);
  if (!m) return null;
  return { mode: m[1] as KeyMode, keyId: keyIdFor(m[2].slice(0, LOOKUP_HEX)), secret: value };
}

export const hashApiKey = (secret: string): string => hash('sha256', secret, 'hex');

/** Constant-time comparison of a presented key against the stored hash. */
export function apiKeyMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

export type BearerParse = { kind: 'none' } | { kind: 'malformed'; reason: string } | { kind: 'key'; key: ParsedApiKey };

/** Reads an Authorization header: absent, malformed (any scheme but Bearer, bad key shape), or a key. */
export function parseAuthorization(header: string | string[] | undefined): BearerParse {
  if (header === undefined) return { kind: 'none' };
  if (Array.isArray(header)) return { kind: 'malformed', reason: 'more than one Authorization header' };
  const m = /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!m) return { kind: 'malformed', reason: 'expected "Authorization: Bearer <key>"' };
  const key = parseApiKey(m[1]);
  return key ? { kind: 'key', key } : { kind: 'malformed', reason: 'not a cdp_live_ or cdp_test_ key' };
}
