import { lookup } from 'node:dns/promises';
import { isPublicAddress, ParsedTarget } from '../domain/target';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export type TargetVerdict =
  | { ok: true; addresses: ResolvedAddress[] }
  | { ok: false; kind: 'not_allowed' | 'unresolvable'; message: string };

/**
 * Resolves a target's host and refuses it unless every address is public (one private address
 * among public ones would let DNS pick the private one). Run at registration and again before
 * each send, whose connection then goes to an address checked here (no second lookup to rebind).
 */
export class TargetGuard {
  constructor(
    private readonly allowPrivate: boolean,
    private readonly resolve: Resolve = systemResolve,
  ) {}

  async check(target: ParsedTarget): Promise<TargetVerdict> {
    let addresses: ResolvedAddress[];
    if (target.ipVersion) {
      addresses = [{ address: target.hostname, family: target.ipVersion }];
    } else {
      try {
        addresses = await this.resolve(target.hostname);
      } catch (err) {
        return { ok: false, kind: 'unresolvable', message: `could not resolve ${target.hostname}: ${(err as NodeJS.ErrnoException).code ?? 'error'}` };
      }
      if (addresses.length === 0) return { ok: false, kind: 'unresolvable', message: `${target.hostname} has no addresses` };
    }
    if (!this.allowPrivate) {
      const refused = addresses.find((a) => !isPublicAddress(a.address));
      if (refused) {
        return { ok: false, kind: 'not_allowed', message: `${target.hostname} resolves to ${refused.address}, which is not a public address` };
      }
    }
    return { ok: true, addresses };
  }
}
