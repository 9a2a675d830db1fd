import { isPublicAddress, isTargetProblem, parseTarget } from './target';

describe('webhook targets', () => {
  it.each([
    '0.0.0.0', '10.1.2.3', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.255.255.255', '169.254.169.254', '172.16.0.1', '172.31.255.255',
    '192.0.0.8', '192.0.2.1', '192.168.1.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
  ])('refuses the non-public IPv4 address %s', (ip) => expect(isPublicAddress(ip)).toBe(false));

  it.each(['1.1.1.1', '8.8.8.8', '93.184.216.34', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '192.169.0.1', '223.255.255.255'])(
    'accepts the public IPv4 address %s',
    (ip) => expect(isPublicAddress(ip)).toBe(true),
  );

  it.each([
    '::', '::1', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1', '100::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::127.0.0.1',
    '64:ff9b::a00:1', '64:ff9b::192.168.0.1', '2002:c0a8:0101::1', '2002:7f00:1::',
    '2001:db8::1', '2001::1', '2001:2::1', '3fff::1',
  ])('refuses the non-public IPv6 address %s', (ip) => expect(isPublicAddress(ip)).toBe(false));

  it.each(['2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    'accepts the public IPv6 address %s',
    (ip) => expect(isPublicAddress(ip)).toBe(true),
  );

  it('treats what is not an address as not public', () => {
    for (const s of ['', 'localhost', '1.2.3', '::ffff:1.2.3.4.5', 'gggg::1']) expect(isPublicAddress(s)).toBe(false);
  });

  it('takes http(s) URLs without credentials or fragments', () => {
    const ok = parseTarget('https://hooks.example.com:8443/in?x=1');
    expect(isTargetProblem(ok)).toBe(false);
    expect(ok).toMatchObject({ hostname: 'hooks.example.com', ipVersion: 0 });
    expect(parseTarget('http://[::1]:80/x')).toMatchObject({ hostname: '::1', ipVersion: 6 });
    expect(parseTarget('http://127.0.0.1/x')).toMatchObject({ hostname: '127.0.0.1', ipVersion: 4 });
    expect(parseTarget('ftp://example.com/')).toMatchObject({ reason: 'scheme' });
    expect(parseTarget('file:///etc/passwd')).toMatchObject({ reason: 'scheme' });
    expect(parseTarget('https://user:pw@example.com/')).toMatchObject({ reason: 'credentials' });
    expect(parseTarget('https://example.com/#x')).toMatchObject({ reason: 'fragment' });
    expect(parseTarget('not a url')).toMatchObject({ reason: 'invalid_url' });
  });

  it('sees through alternative spellings of loopback, which URL parsing normalizes', () => {
    for (const raw of ['http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/']) {
      const t = parseTarget(raw);
      if (isTargetProblem(t)) throw new Error(raw);
      expect(t.ipVersion).not.toBe(0);
      expect(isPublicAddress(t.hostname)).toBe(false);
    }
  });
});
