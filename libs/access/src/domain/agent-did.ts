import { createHash } from 'node:crypto';

/**
 * `X-Agent-DID: did:cd:agent:<id>`, where id is 1..240 of letters, digits, `.`, `_`, `-`, `:`,
 * and the whole at most 256 characters. Self-asserted: it selects a lane, it proves nothing.
 */
const PREFIX = 'did:cd:agent:';
const ID_RE = /^[A-Za-z0-9._:-]+$/;

export type DidRejection = 'too_long' | 'bad_prefix' | 'empty_id' | 'id_too_long' | 'bad_characters' | 'multiple_headers';

export type DidParse = { kind: 'none' } | { kind: 'valid'; did: string } | { kind: 'rejected'; reason: DidRejection };

export function parseAgentDid(header: string | string[] | undefined): DidParse {
  if (header === undefined || header === '') return { kind: 'none' };
  if (Array.isArray(header)) return { kind: 'rejected', reason: 'multiple_headers' };
  if (header.length > 256) return { kind: 'rejected', reason: 'too_long' };
  if (!header.startsWith(PREFIX)) return { kind: 'rejected', reason: 'bad_prefix' };
  const id = header.slice(PREFIX.length);
  if (id.length === 0) return { kind: 'rejected', reason: 'empty_id' };
  if (id.length > 240) return { kind: 'rejected', reason: 'id_too_long' };
  if (!ID_RE.test(id)) return { kind: 'rejected', reason: 'bad_characters' };
  return { kind: 'valid', did: header };
}

/** The opaque identity key of the agent lane: a hash of the DID, never the DID itself. */
export const didIdentityKey = (did: string): string => `did_${createHash('sha256').update(did).digest('hex').slice(0, 32)}`;
