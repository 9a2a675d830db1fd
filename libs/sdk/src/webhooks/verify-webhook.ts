import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, equalBytes, fromBase64, fromBase64Url, utf8 } from '../encoding/bytes';
import { verifyEd25519 } from '../verify/ed25519';
import { KeysDocument, keysOf } from '../verify/keys';

/**
 * Standard Webhooks (standard-webhooks.com) receiver check. The signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`; `webhook-signature` holds space-separated entries:
 *   v1,<base64 HMAC-SHA256 under the endpoint's whsec_ secret (its base64-decoded bytes)>
 *   v1a,<base64 Ed25519 signature by the service's published signing key>
 */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type WebhookFailure =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_secret'
  | 'no_matching_signature';

export interface WebhookVerification {
  valid: boolean;
  reason?: WebhookFailure;
  /** webhook-id: stable across retries and redeliveries; deduplicate on it. */
  id: string | null;
  /** webhook-timestamp, in seconds since the epoch. */
  timestamp: number | null;
}

export interface VerifyWebhookOptions {
  /** How far webhook-timestamp may be from now, either way (default 300 s). */
  toleranceSeconds?: number;
  /** Current time in milliseconds (default Date.now). */
  now?: () => number;
}

export class WebhookVerificationError extends Error {
  constructor(readonly reason: WebhookFailure) {
    super(`webhook verification failed: ${reason}`);
    this.name = 'WebhookVerificationError';
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  return Array.isArray(value) ? value.join(' ') : value;
}

type Verifier = { version: 'v1'; check: (content: Uint8Array, signature: Uint8Array) => boolean } | { version: 'v1a'; keys: Uint8Array[] };

/** What the caller gave us to check against: a whsec_ secret, one public key, or a keys document. */
function verifierFor(key: unknown, timestamp: number): Verifier | null {
  if (typeof key === 'string') {
    if (key.startsWith('whsec_')) {
      const secret = fromBase64(key.slice('whsec_'.length));
      if (!secret || secret.length === 0) return null;
      return { version: 'v1', check: (content, signature) => equalBytes(hmac(sha256, secret, content), signature) };
    }
    const raw = key.startsWith('whpk_') ? fromBase64(key.slice('whpk_'.length)) : fromBase64Url(key);
    return raw && raw.length === 32 ? { version: 'v1a', keys: [raw] } : null;
  }
  // A keys document: every key that could have signed at this timestamp (active, or retired after it).
  const keys = keysOf(key);
  if (!keys) return null;
  const usable = keys
    .filter((k) => k.algorithm === 'Ed25519')
    .filter((k) => k.status === 'active' || (k.status === 'retired' && typeof k.retired_at === 'string' && Date.parse(k.retired_at) >= timestamp * 1000))
    .map((k) => fromBase64Url(k.public_key))
    .filter((k): k is Uint8Array => k !== null && k.length === 32);
  return { version: 'v1a', keys: usable };
}

/**
 * Verifies a webhook delivery. `body` must be the raw request body, byte for byte (not re-serialized
 * JSON). `secretOrPublicKey` is one of:
 *   - the endpoint's secret `whsec_<base64>`: checks the `v1` (HMAC-SHA256) entries;
 *   - the service's Ed25519 public key, as `public_key` in /.well-known/signing-keys.json (base64url of
 *     the raw 32 bytes) or as Standard Webhooks' `whpk_<base64>`: checks the `v1a` entries;
 *   - the keys document itself: `v1a` against its active key (and keys retired after the timestamp).
 * Never throws; see verifyWebhookOrThrow for the throwing form.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secretOrPublicKey: string | KeysDocument,
  options: VerifyWebhookOptions = {},
): WebhookVerification {
  const id = header(headers, 'webhook-id') ?? null;
  const rawTimestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const timestamp = rawTimestamp !== undefined && /^\d{1,15}$/.test(rawTimestamp.trim()) ? Number(rawTimestamp.trim()) : null;
  const result = { valid: false, id, timestamp };
  if (!id || !rawTimestamp || !signatures) return { ...result, reason: 'missing_headers' };
  if (timestamp === null) return { ...result, reason: 'invalid_timestamp' };
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (now - timestamp > tolerance) return { ...result, reason: 'timestamp_too_old' };
  if (timestamp - now > tolerance) return { ...result, reason: 'timestamp_too_new' };

  const verifier = verifierFor(secretOrPublicKey, timestamp);
  if (!verifier) return { ...result, reason: 'invalid_secret' };
  // As the standardwebhooks reference library does: the timestamp as its integer.
  const content = concatBytes(utf8(`${id}.${timestamp}.`), typeof body === 'string' ? utf8(body) : body);
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== verifier.version) continue;
    const encoded = entry.slice(comma + 1);
    const signature = fromBase64(encoded) ?? fromBase64Url(encoded);
    if (!signature) continue;
    const ok = verifier.version === 'v1' ? verifier.check(content, signature) : verifier.keys.some((k) => verifyEd25519(k, content, signature));
    if (ok) return { valid: true, id, timestamp };
  }
  return { ...result, reason: 'no_matching_signature' };
}

/** verifyWebhook that throws WebhookVerificationError, for handlers written that way. */
export function verifyWebhookOrThrow(...args: Parameters<typeof verifyWebhook>): { id: string; timestamp: number } {
  const result = verifyWebhook(...args);
  if (!result.valid) throw new WebhookVerificationError(result.reason!);
  return { id: result.id!, timestamp: result.timestamp! };
}
