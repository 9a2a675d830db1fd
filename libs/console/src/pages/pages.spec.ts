import { CONSOLE_CSP, esc, money, page, timeLeft } from './layout';
import { parseAmount } from '../http/amount';
import { jsonForScript } from './timeline-script';
import { cookie, parseCookies, readCookie } from '../http/cookies';

describe('console pages', () => {
  it('escapes text and attributes', () => {
    expect(esc(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
    const html = page('<b>title</b>', '<p>body</p>', { flash: { kind: 'error', text: '<script>x</script>' } });
    expect(html).toContain('<h1>&#60;b&#62;title&#60;/b&#62;</h1>');
    expect(html).not.toContain('<script>x');
    expect(html).not.toMatch(/<script>|<style|style="/);
  });

  it('embeds JSON that cannot close its script element', () => {
    const text = jsonForScript({ note: '</script><script>alert(1)</script>', amp: '&', ls: '\u2028' });
    expect(text).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(text)).toEqual({ note: '</script><script>alert(1)</script>', amp: '&', ls: '\u2028' });
  });

  it('allows same-origin scripts and styles only', () => {
    expect(CONSOLE_CSP).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self';/);
    expect(CONSOLE_CSP).toContain("form-action 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe|https?:|\*/);
  });

  it('shows amounts in the currency\u2019s unit and the time left', () => {
    expect(money(30_000, 'USD')).toBe('300.00 USD');
    expect(money(500, 'JPY')).toBe('500 JPY');
    const now = new Date('2026-11-25T12:00:00Z');
    expect(timeLeft('2026-11-25T12:04:30Z', now)).toBe('5 min');
    expect(timeLeft('2026-11-25T14:05:00Z', now)).toBe('2 h 5 min');
    expect(timeLeft('2026-11-25T11:00:00Z', now)).toBe('expired');
  });

  it('reads an approved amount in major units', () => {
    expect(parseAmount('', 'USD')).toBeUndefined();
    expect(parseAmount('250', 'USD')).toBe(25_000);
    expect(parseAmount('2.5', 'USD')).toBe(250);
    expect(parseAmount('12', 'JPY')).toBe(12);
    for (const bad of ['2.505', '-1', '0', '1e3', 'abc']) expect(() => parseAmount(bad, 'USD')).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => parseAmount('1.5', 'JPY')).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => parseAmount('1', 'XXQ')).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('cookies: HttpOnly, SameSite=Strict; over HTTPS __Host- (Secure, Path=/, no Domain), plain over HTTP; the first of two wins', () => {
    expect(cookie('a', 'b', { secure: true, maxAgeSeconds: 60 })).toBe('__Host-a=b; Path=/; Max-Age=60; HttpOnly; SameSite=Strict; Secure');
    expect(cookie('a', 'b', { secure: false, maxAgeSeconds: 60 })).toBe('a=b; Path=/console; Max-Age=60; HttpOnly; SameSite=Strict');
    // Over HTTPS only the prefixed name is read: a plain one (settable from a sibling subdomain) is ignored.
    expect(readCookie('sigil_session=evil', 'sigil_session', true)).toBeUndefined();
    expect(readCookie('sigil_session=evil; __Host-sigil_session=ours', 'sigil_session', true)).toBe('ours');
    expect(readCookie('sigil_session=ours', 'sigil_session', false)).toBe('ours');
    expect(parseCookies('x=1; sigil_session=abc; sigil_session=def')).toEqual(new Map([['x', '1'], ['sigil_session', 'abc']]));
  });
});
