/**
 * Byte encodings without Buffer, so the same code runs in browsers: hex, base64 and
 * base64url (RFC 4648), UTF-8 through TextEncoder/TextDecoder.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DECODE = new Map<string, number>();
for (let i = 0; i < 64; i++) DECODE.set(ALPHABET[i], i);
const DECODE_URL = new Map<string, number>();
for (let i = 0; i < 64; i++) DECODE_URL.set(URL_ALPHABET[i], i);

const encoder = new TextEncoder();

export const utf8 = (text: string): Uint8Array => encoder.encode(text);

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Strict: an even number of hex digits (any case); null otherwise. */
export function fromHex(text: string): Uint8Array | null {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63] + alphabet[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + (pad ? '==' : '');
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63] + (pad ? '=' : '');
  }
  return out;
}

/** Decodes unpadded text; rejects stray low bits in the last character (non-canonical). */
function decode(text: string, table: Map<string, number>): Uint8Array | null {
  if (text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const c of text) {
    const v = table.get(c);
    if (v === undefined) return null;
    value = (value << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (value >> bits) & 0xff;
    }
  }
  if ((value & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

/** base64url without padding (RFC 4648 §5): the encoding of keys and signatures. */
export const toBase64Url = (bytes: Uint8Array): string => encode(bytes, URL_ALPHABET, false);

/** Strict base64url decode: no padding, only the URL alphabet, canonical; null otherwise. */
export const fromBase64Url = (text: string): Uint8Array | null => decode(text, DECODE_URL);

/** Standard base64 with padding (RFC 4648 §4), as Standard Webhooks uses it. */
export const toBase64 = (bytes: Uint8Array): string => encode(bytes, ALPHABET, true);

/** Standard base64, padded or not; null when malformed. */
export function fromBase64(text: string): Uint8Array | null {
  const stripped = text.replace(/={1,2}$/, '');
  if (text.length !== stripped.length && text.length % 4 !== 0) return null;
  return decode(stripped, DECODE);
}

/** Constant-time equality of two byte strings (length is not secret). */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
