import { apiKeyMatches, generateApiKey, hashApiKey, parseApiKey, parseAuthorization } from './api-key';
import { didIdentityKey, parseAgentDid } from './agent-did';
import { BucketPolicy, BUCKETS, PUBLIC_READ_BUCKETS, ruleFor } from './lanes';
import { missingScopes, parseScopes, SCOPES, scopesBeyond } from './scopes';

describe('API keys', () => {
  it('makes cdp_test_/cdp_live_ keys of 256 random bits with a non-secret lookup id', () => {
    const a = generateApiKey('test');
    const b = generateApiKey('live');
    expect(a.secret).toMatch(/^cdp_test_[0-9a-f]{64}$/);
    expect(b.secret).toMatch(/^cdp_live_[0-9a-f]{64}$/);
    expect(a.keyId).toBe(`key_${a.secret.slice(9, 25)}`);
    expect(a.secretHash).toBe(hashApiKey(a.secret));
    expect(a.secretHash).not.toContain(a.secret.slice(9));
    const many = new Set(Array.from({ length: 1000 }, () => generateApiKey('test').secret));
    expect(many.size).toBe(1000);
  });

  it('parses only exact key shapes', () => {
    const k = generateApiKey('test');
    expect(parseApiKey(k.secret)).toEqual({ mode: 'test', keyId: k.keyId, secret: k.secret });
    for (const bad of ['', 'cdp_test_', 'cdp_prod_' + 'a'.repeat(64), 'cdp_test_' + 'A'.repeat(64), 'cdp_test_' + 'a'.repeat(63), k.secret + 'a', ' ' + k.secret]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });

  it('matches a key against its stored hash, and nothing else', () => {
    const k = generateApiKey('live');
    expect(apiKeyMatches(k.secret, k.secretHash)).toBe(true);
    expect(apiKeyMatches(generateApiKey('live').secret, k.secretHash)).toBe(false);
    expect(apiKeyMatches(k.secret, 'deadbeef')).toBe(false);
  });

  it('reads Authorization headers: none, malformed, or a bearer key', () => {
    const k = generateApiKey('test');
    expect(parseAuthorization(undefined)).toEqual({ kind: 'none' });
    expect(parseAuthorization(`Bearer ${k.secret}`)).toMatchObject({ kind: 'key', key: { keyId: k.keyId } });
    expect(parseAuthorization(`bearer ${k.secret}`)).toMatchObject({ kind: 'key' });
    for (const bad of ['Bearer', `Basic ${k.secret}`, `Bearer ${k.secret} extra`, 'Bearer not-a-key', `Bearer  ${k.secret}x`, 'Token abc']) {
      expect(parseAuthorization(bad)).toMatchObject({ kind: 'malformed' });
    }
    expect(parseAuthorization([`Bearer ${k.secret}`, `Bearer ${k.secret}`])).toMatchObject({ kind: 'malformed' });
  });
});

describe('agent DIDs', () => {
  it('accepts the grammar: did:cd:agent: + 1..240 of [A-Za-z0-9._:-], 256 at most', () => {
    for (const ok of ['did:cd:agent:a', 'did:cd:agent:Agent-7.v2_x:y', 'did:cd:agent:' + 'z'.repeat(240)]) {
      expect(parseAgentDid(ok)).toEqual({ kind: 'valid', did: ok });
    }
  });

  it.each([
    ['did:cd:agent:' + 'z'.repeat(241), 'id_too_long'],
    ['did:cd:agent:' + 'z'.repeat(250), 'too_long'],
    ['did:web:example.com', 'bad_prefix'],
    ['DID:CD:AGENT:x', 'bad_prefix'],
    ['did:cd:agent:', 'empty_id'],
    ['did:cd:agent:has space', 'bad_characters'],
    ['did:cd:agent:semi;colon', 'bad_characters'],
    ['did:cd:agent:ünïcode', 'bad_characters'],
    ['did:cd:agent:slash/x', 'bad_characters'],
  ])('rejects %s as %s', (did, reason) => {
    expect(parseAgentDid(did)).toEqual({ kind: 'rejected', reason });
  });

  it('treats absence as none and repeated headers as rejected', () => {
    expect(parseAgentDid(undefined)).toEqual({ kind: 'none' });
    expect(parseAgentDid(['did:cd:agent:a', 'did:cd:agent:b'])).toEqual({ kind: 'rejected', reason: 'multiple_headers' });
  });

  it('derives an opaque identity key that never contains the DID', () => {
    const id = didIdentityKey('did:cd:agent:alice');
    expect(id).toMatch(/^did_[0-9a-f]{32}$/);
    expect(id).toBe(didIdentityKey('did:cd:agent:alice'));
    expect(id).not.toBe(didIdentityKey('did:cd:agent:bob'));
  });
});

describe('scopes', () => {
  it('lists the spec scopes plus certificates:write, approvals:manage, users:manage and keys:manage', () => {
    expect([...SCOPES].sort()).toEqual(['approvals:manage', 'certificates:write', 'keys:manage', 'payments:read', 'payments:write', 'receipts:read', 'users:manage', 'webhooks:manage']);
  });

  it('names the scopes a creator may not grant (a key or a person grants only what it holds)', () => {
    expect(scopesBeyond(['keys:manage', 'payments:read'], ['payments:read'])).toEqual([]);
    expect(scopesBeyond(['keys:manage', 'payments:read'], ['payments:read', 'approvals:manage', 'users:manage'])).toEqual(['approvals:manage', 'users:manage']);
  });

  it('parses a comma list, reporting unknown scopes', () => {
    expect(parseScopes('payments:write, receipts:read,payments:write')).toEqual({ scopes: ['payments:write', 'receipts:read'], unknown: [] });
    expect(parseScopes('payments:write,admin')).toEqual({ scopes: ['payments:write'], unknown: ['admin'] });
    expect(missingScopes(['payments:read'], ['payments:read', 'payments:write'])).toEqual(['payments:write']);
  });
});

describe('lanes and buckets', () => {
  const perKey = { limit: 1000, windowSeconds: 60 };
  it('carries the agent-lane values of the spec', () => {
    expect(BUCKETS.demo_window.agent.limit).toBe(60);
    expect(BUCKETS.public_verify_window.agent.limit).toBe(240);
    expect(BUCKETS.sandbox_key_daily.agent.limit).toBe(30);
    expect(BUCKETS.sandbox_key_daily.anonymous).toEqual({ limit: 3, windowSeconds: 86_400 });
    expect(BUCKETS.sandbox_key_daily.global).toEqual({ limit: 60, windowSeconds: 60 });
  });

  it('gives authenticated callers their per-key limit where the surface has no rule of its own', () => {
    expect(ruleFor('public_verify_window', 'authenticated', perKey)).toBe(perKey);
    expect(ruleFor('public_verify_window', 'anonymous', perKey)).toEqual({ limit: 60, windowSeconds: 60 });
    expect(ruleFor('sandbox_key_daily', 'authenticated', perKey)).toEqual({ limit: 30, windowSeconds: 86_400 });
  });

  it('counts each public surface of the spec in its own bucket, with the spec\'s anonymous values per IP', () => {
    const perMinute = (limit: number) => ({ limit, windowSeconds: 60 });
    expect(BUCKETS.certificate_fetch_window.anonymous).toEqual(perMinute(60));
    expect(BUCKETS.public_verify_window.anonymous).toEqual(perMinute(60));
    expect(BUCKETS.registry_list_window.anonymous).toEqual(perMinute(60));
    expect(BUCKETS.badge_window.anonymous).toEqual(perMinute(300));
    expect(BUCKETS.demo_window.anonymous).toEqual({ limit: 10, windowSeconds: 900 });
    expect([...PUBLIC_READ_BUCKETS].sort()).toEqual(['badge_window', 'certificate_fetch_window', 'public_verify_window', 'registry_list_window']);
    expect(new Set(PUBLIC_READ_BUCKETS).size).toBe(PUBLIC_READ_BUCKETS.length);
  });

  it('gives the agent lane 4× the anonymous value on the public reads, as the spec does for public_verify_window', () => {
    for (const name of PUBLIC_READ_BUCKETS) {
      const policy: BucketPolicy = BUCKETS[name];
      expect({ name, agent: policy.agent }).toEqual({ name, agent: { limit: 4 * policy.anonymous!.limit, windowSeconds: policy.anonymous!.windowSeconds } });
    }
    expect(BUCKETS.certificate_fetch_window.agent.limit).toBe(240);
    expect(BUCKETS.registry_list_window.agent.limit).toBe(240);
    expect(BUCKETS.badge_window.agent.limit).toBe(1200);
  });

  it('fails open on every public read, keeps no global bucket or per-IP key counting there, and lets keys use their own window', () => {
    for (const name of PUBLIC_READ_BUCKETS) {
      const policy: BucketPolicy = BUCKETS[name];
      expect({ name, onStoreDown: policy.onStoreDown, global: policy.global, perIp: policy.perIp }).toEqual({ name, onStoreDown: 'open', global: undefined, perIp: undefined });
      expect(ruleFor(name, 'authenticated', perKey)).toBe(perKey);
      expect(ruleFor(name, 'anonymous', perKey)).toEqual(policy.anonymous);
      expect(ruleFor(name, 'agent', perKey)).toEqual(policy.agent);
    }
    expect(BUCKETS.sandbox_key_daily.onStoreDown).toBe('closed');
  });
});
