import { createHash, createHmac, randomBytes, scrypt, ScryptOptions, timingSafeEqual } from 'node:crypto';

/**
 * The console's secrets. Session tokens and one-time sign-in tokens are 256 random bits, stored
 * only as SHA-256 (as API keys are: a slow hash adds nothing for such secrets). Passwords are
 * people's own choice, so they are stored as scrypt (N=2^15, r=8, p=1, 16-byte salt) and compared
 * in constant time. scrypt runs on libuv's thread pool (never on the event loop), at most
 * SCRYPT_CONCURRENCY at once: further sign-ins wait their turn rather than take every thread.
 */
export const SESSION_TOKEN_RE = /^sgs_[0-9a-f]{64}$/;
export const LINK_TOKEN_RE = /^sgl_[0-9a-f]{64}$/;

export const newSessionToken = () => `sgs_${randomBytes(32).toString('hex')}`;
export const newLinkToken = () => `sgl_${randomBytes(32).toString('hex')}`;
export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** The synchronizer token of a session's forms: derived from the session's secret, so only its holder can compute it. */
export const csrfTokenFor = (sessionToken: string) => createHmac('sha256', sessionToken).update('sigil-console-csrf').digest('base64url');

export function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 };
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

export const SCRYPT_CONCURRENCY = 2;
let running = 0;
const waiting: (() => void)[] = [];

/** scrypt off the event loop, with at most SCRYPT_CONCURRENCY derivations in flight. */
async function derive(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  if (running >= SCRYPT_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await new Promise<Buffer>((resolve, reject) => scrypt(password.normalize('NFC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
  } finally {
    running--;
    waiting.shift()?.();
  }
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, maxmem: SCRYPT.maxmem });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A hash with the current parameters that matches no password: compared against when the user is unknown, so timing reveals nothing. */
export const DUMMY_PASSWORD_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;

export async function passwordMatches(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = (stored ?? DUMMY_PASSWORD_HASH).split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem });
  return timingSafeEqual(actual, expected) && stored !== null;
}
