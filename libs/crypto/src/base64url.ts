/** base64url without padding (RFC 4648 §5), the encoding of keys and signatures. */
export const toBase64Url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

const B64URL = /^[A-Za-z0-9_-]*$/;
/** Strict decode: rejects padding and characters outside the base64url alphabet. */
export function fromBase64Url(text: string): Buffer | null {
  if (!B64URL.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  // Reject non-canonical encodings (stray low bits in the last character).
  return bytes.toString('base64url') === text ? bytes : null;
}
