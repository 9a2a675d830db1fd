/**
 * A certificate's badge: what a README shows of its verification. Pure: the verdict in, the
 * badge's state, words and colour out; and the badge drawn as a small flat SVG (text escaped,
 * no script, no external reference), in the style of shields.io so it sits beside other badges.
 */
export type BadgeState = 'verified' | 'deprecated' | 'revoked_key' | 'invalid' | 'not_found';

export interface Badge {
  state: BadgeState;
  label: string;
  message: string;
  /** A hex colour. */
  color: string;
}

export interface BadgeVerdict {
  verified: boolean;
  status: string;
  is_deprecated: boolean;
  reason: string | null;
}

const LABEL = 'sigil';

export function badgeFor(v: BadgeVerdict): Badge {
  if (v.status === 'NOT_FOUND') return { state: 'not_found', label: LABEL, message: 'not found', color: '#9f9f9f' };
  if (v.verified && v.reason === 'signed_by_revoked_key_before_revocation') return { state: 'revoked_key', label: LABEL, message: 'verified, key revoked', color: '#fe7d37' };
  if (v.verified && v.is_deprecated) return { state: 'deprecated', label: LABEL, message: 'verified, deprecated', color: '#dfb317' };
  if (v.verified) return { state: 'verified', label: LABEL, message: 'verified', color: '#4c1' };
  if (v.reason === 'key_revoked' || v.reason === 'signed_after_retirement') return { state: 'revoked_key', label: LABEL, message: 'key revoked', color: '#e05d44' };
  return { state: 'invalid', label: LABEL, message: 'invalid', color: '#e05d44' };
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);

// Verdana 11px averages about 7 px a character; the badge grows with its words.
const widthOf = (text: string) => Math.round(text.length * 7 + 10);

export function badgeSvg(b: Badge): string {
  const lw = widthOf(b.label);
  const mw = widthOf(b.message);
  const w = lw + mw;
  const label = escapeXml(b.label);
  const message = escapeXml(b.message);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${label}: ${message}">`,
    `<title>${label}: ${message}</title>`,
    `<rect width="${lw}" height="20" fill="#555"/>`,
    `<rect x="${lw}" width="${mw}" height="20" fill="${escapeXml(b.color)}"/>`,
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">`,
    `<text x="${lw / 2}" y="14">${label}</text>`,
    `<text x="${lw + mw / 2}" y="14">${message}</text>`,
    `</g></svg>`,
  ].join('');
}
