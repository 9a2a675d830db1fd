import ipaddr from 'ipaddr.js';

/**
 * The network a per-IP limit counts for an address: an IPv4 address itself (an IPv4-mapped IPv6
 * one as its IPv4), an IPv6 address's /64. One subscriber gets a whole /64 and may use any
 * address in it, so counting IPv6 addresses one by one would give a single client 2^64 buckets.
 * Anything that does not parse (it came from the socket, so it should) counts as itself.
 */
export function clientNetwork(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  let addr = ipaddr.parse(ip);
  if (addr instanceof ipaddr.IPv6 && addr.isIPv4MappedAddress()) addr = addr.toIPv4Address();
  if (addr instanceof ipaddr.IPv4) return addr.toString();
  return `${addr.parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}
