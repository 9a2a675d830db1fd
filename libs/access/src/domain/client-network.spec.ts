import { clientNetwork } from './client-network';

describe('clientNetwork (what a per-IP limit counts)', () => {
  it('counts an IPv4 address as itself, also when it arrives IPv4-mapped', () => {
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('::ffff:cb00:7107')).toBe('203.0.113.7');
  });

  it('counts every address of one IPv6 /64 together, whatever its spelling', () => {
    const network = clientNetwork('2001:db8:1:2::1');
    expect(network).toBe('2001:db8:1:2::/64');
    for (const same of ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002:0:0:0:9', '2001:db8:1:2:abcd::']) expect(clientNetwork(same)).toBe(network);
    expect(clientNetwork('2001:db8:1:3::1')).not.toBe(network);
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
  });

  it('counts what does not parse as itself', () => {
    expect(clientNetwork('not-an-ip')).toBe('not-an-ip');
    expect(clientNetwork('')).toBe('');
  });
});
