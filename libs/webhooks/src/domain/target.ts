import { BlockList, isIP } from 'node:net';

/**
 * Which webhook targets are allowed: http(s) URLs without credentials, whose addresses are
 * public unicast. Private, loopback, link-local, unique-local, CGNAT, multicast, unspecified,
 * documentation and other special-purpose ranges are refused (IPv4 and IPv6; an IPv6 address
 * that embeds an IPv4 one — mapped, NAT64, 6to4 — is judged by the embedded address).
 */
export type TargetProblem = { reason: 'invalid_url' | 'scheme' | 'credentials' | 'fragment'; message: string };

export interface ParsedTarget {
  url: URL;
  /** The host to resolve, without IPv6 brackets. */
  hostname: string;
  /** 4 or 6 when the host is an IP literal, else 0. */
  ipVersion: 0 | 4 | 6;
}

export const MAX_URL_LENGTH = 2048;

export function parseTarget(raw: string): ParsedTarget | TargetProblem {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: 'invalid_url', message: 'url is not an absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { reason: 'scheme', message: 'url must use http or https' };
  if (url.username || url.password) return { reason: 'credentials', message: 'url must not carry credentials (user:password@)' };
  if (url.hash) return { reason: 'fragment', message: 'url must not have a #fragment' };
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!hostname) return { reason: 'invalid_url', message: 'url has no host' };
  const v = isIP(hostname);
  return { url, hostname, ipVersion: v === 4 || v === 6 ? v : 0 };
}

export const isTargetProblem = (t: ParsedTarget | TargetProblem): t is TargetProblem => 'reason' in t;

const v4Blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT shared address space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  v4Blocked.addSubnet(net, prefix, 'ipv4');
}

// Only global unicast (2000::/3) can be public; within it these are special-purpose.
const v6Blocked = new BlockList();
for (const [net, prefix] of [
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
] as const) {
  v6Blocked.addSubnet(net, prefix, 'ipv6');
}
const v6GlobalUnicast = new BlockList();
v6GlobalUnicast.addSubnet('2000::', 3, 'ipv6');

/** The 8 groups of an IPv6 address as numbers (handles `::` and a dotted IPv4 tail). */
function ipv6Groups(address: string): number[] {
  let addr = address.toLowerCase().replace(/%.*$/, '');
  const dotted = addr.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const o = dotted[1].split('.').map(Number);
    addr = addr.slice(0, -dotted[1].length) + `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const [head, tail] = addr.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => parseInt(g, 16));
}

const v4FromGroups = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** The IPv4 address an IPv6 one stands for, if any (mapped, IPv4-compatible, NAT64, 6to4). */
function embeddedIpv4(g: number[]): string | null {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4FromGroups(g[6], g[7]); // ::ffff:a.b.c.d
  if (zero(0, 6)) return v4FromGroups(g[6], g[7]); // ::a.b.c.d (deprecated), also :: and ::1
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4FromGroups(g[6], g[7]); // NAT64 64:ff9b::/96
  if (g[0] === 0x2002) return v4FromGroups(g[1], g[2]); // 6to4
  return null;
}

/** True only for a publicly routable unicast address. Anything unparsable is not public. */
export function isPublicAddress(address: string): boolean {
  const version = isIP(address.replace(/%.*$/, ''));
  if (version === 4) return !v4Blocked.check(address, 'ipv4');
  if (version !== 6) return false;
  const g = ipv6Groups(address);
  if (g.length !== 8 || g.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffff)) return false;
  const v4 = embeddedIpv4(g);
  if (v4 !== null) return !v4Blocked.check(v4, 'ipv4');
  const normalized = g.map((x) => x.toString(16)).join(':');
  return v6GlobalUnicast.check(normalized, 'ipv6') && !v6Blocked.check(normalized, 'ipv6');
}
