import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from './canonical-json';
import { toHex, utf8 } from './bytes';

/** Lowercase hex SHA-256 of bytes or of a string's UTF-8 bytes. */
export function sha256Hex(input: string | Uint8Array): string {
  return toHex(sha256(typeof input === 'string' ? utf8(input) : input));
}

/** `sha256:<lowercase hex>` of the RFC 8785 form of a JSON value (the payload hash). */
export function canonicalHash(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

/** Accepts `sha256:<hex>` (lowercase) or bare hex (any case); returns `sha256:<lowercase hex>` or null. */
export function normalizeSha256(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  if (/^sha256:[0-9a-f]{64}$/.test(value)) return value;
  return /^[0-9a-fA-F]{64}$/.test(value) ? `sha256:${value.toLowerCase()}` : null;
}

export const isSha256Tagged = (value: unknown): value is string => typeof value === 'string' && /^sha256:[0-9a-f]{64}$/.test(value);

const LONE_SURROGATE = /\p{Surrogate}/u;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The artifact hash exactly as the service computes it at issuance: content that parses as JSON
 * is hashed in its RFC 8785 form (so pretty and compact JSON agree), anything else as its UTF-8
 * bytes. Bytes (a file) are read as UTF-8 first; bytes that are not UTF-8 are hashed as they are.
 * Throws on a string with a lone surrogate, which the service refuses.
 */
export function hashContent(content: string | Uint8Array): string {
  let text: string;
  if (typeof content === 'string') {
    if (LONE_SURROGATE.test(content)) throw new TypeError('content contains a lone surrogate (not valid Unicode)');
    text = content;
  } else {
    try {
      text = strictUtf8.decode(content);
    } catch {
      return `sha256:${sha256Hex(content)}`;
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return `sha256:${sha256Hex(typeof content === 'string' ? text : content)}`;
  }
  return canonicalHash(json);
}
