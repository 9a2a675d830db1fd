import { badgeFor, badgeSvg } from './badge';

const v = (over: Partial<Parameters<typeof badgeFor>[0]>) => ({ verified: true, status: 'ISSUED', is_deprecated: false, reason: null, ...over });

describe('certificate badge', () => {
  it('says what the verification says: verified, deprecated, a revoked key, invalid, not found', () => {
    expect(badgeFor(v({}))).toEqual({ state: 'verified', label: 'sigil', message: 'verified', color: '#4c1' });
    expect(badgeFor(v({ is_deprecated: true })).state).toBe('deprecated');
    expect(badgeFor(v({ reason: 'signed_by_revoked_key_before_revocation' }))).toMatchObject({ state: 'revoked_key', message: 'verified, key revoked' });
    expect(badgeFor(v({ verified: false, reason: 'key_revoked' }))).toMatchObject({ state: 'revoked_key', message: 'key revoked' });
    expect(badgeFor(v({ verified: false, reason: 'signature_invalid' }))).toMatchObject({ state: 'invalid', message: 'invalid' });
    expect(badgeFor(v({ verified: false, status: 'NOT_FOUND', reason: 'certificate_not_found' }))).toMatchObject({ state: 'not_found', message: 'not found' });
  });

  it('draws a self-contained SVG with its words escaped and no script or external reference', () => {
    const svg = badgeSvg({ state: 'invalid', label: 'a<b>&"c\'', message: '<script>alert(1)</script>', color: '#e05d44' });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).not.toMatch(/<script|href=|url\(/i);
    expect(svg).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(svg).toContain('a&lt;b&gt;&amp;&quot;c&apos;');
    // Longer words make a wider badge.
    const width = (s: string) => Number(/width="(\d+)"/.exec(s)![1]);
    expect(width(badgeSvg(badgeFor(v({ is_deprecated: true }))))).toBeGreaterThan(width(badgeSvg(badgeFor(v({})))));
  });
});
