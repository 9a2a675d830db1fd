import { randomBytes } from 'node:crypto';
import { KeyRing } from '@app/crypto';
import { legacyManifest, legacySignature, legacySigner } from '../../../../test/support/legacy-certificates';
import { schemaSupport } from './certificate';
import { ExistingCertificate, LegacyCertificate, parseLegacyFile, planLegacyImport } from './legacy-certificate';

const NOW = new Date('2025-06-01T00:00:00.000Z');
const ORG = 'org_legacy';

const parse = (value: unknown): LegacyCertificate[] => {
  const parsed = parseLegacyFile(JSON.stringify(value));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.certificates;
};
const problemsOf = (text: string) => {
  const parsed = parseLegacyFile(text);
  if (parsed.ok) throw new Error('parsed');
  return parsed.problems;
};

describe('schemaSupport', () => {
  it('service.cert.v1 is current, cert.v2 deprecated, anything else unsupported', () => {
    expect(schemaSupport('service.cert.v1')).toEqual({ is_supported: true, is_deprecated: false });
    expect(schemaSupport('cert.v2')).toEqual({ is_supported: true, is_deprecated: true });
    for (const v of ['cert.v9', 'cert.v1', 'service.registry.v1', '', undefined, 2]) expect(schemaSupport(v)).toEqual({ is_supported: false, is_deprecated: false });
  });
});

describe('parseLegacyFile', () => {
  const signer = legacySigner();

  it('takes one manifest or an array of them, and keeps exactly the manifest apart from its public key', () => {
    const one = legacyManifest(signer);
    const [single] = parse(one);
    expect(single).toEqual({ manifest: { schema_version: 'cert.v2', payload: one.payload, signature: one.signature }, public_key: signer.publicKey });
    const many = parse([legacyManifest(signer), legacyManifest(signer, {}, { withPublicKey: false })]);
    expect(many.map((c) => c.public_key)).toEqual([signer.publicKey, null]);
  });

  it('keeps unknown signed payload fields (they are part of what was signed)', () => {
    const m = legacyManifest(signer, { inner_artifacts: { 'a.csv': { sha256: 'x' } }, legacy_note: 'kept' });
    expect(parse(m)[0].manifest.payload).toMatchObject({ inner_artifacts: { 'a.csv': { sha256: 'x' } }, legacy_note: 'kept' });
  });

  it('names the file-level problem: not JSON, an empty array', () => {
    expect(problemsOf('{not json')).toEqual([{ index: null, field: '', message: expect.stringMatching(/^not JSON/) }]);
    expect(problemsOf('[]')).toEqual([{ index: null, field: '', message: expect.stringMatching(/no certificate/) }]);
  });

  it('names every failing field with the index of its certificate', () => {
    const good = legacyManifest(signer);
    const cases: Array<[unknown, string]> = [
      [{ ...good, payload: { ...good.payload, certification_id: 'nope' } }, 'payload.certification_id'],
      [{ ...good, payload: { ...good.payload, timestamp: '2024-05-01 10:00' } }, 'payload.timestamp'],
      [{ ...good, payload: { ...good.payload, dataset_hash: 'sha256:ABC' } }, 'payload.dataset_hash'],
      [{ ...good, payload: { ...good.payload, issuer: undefined } }, 'payload.issuer'],
      [{ ...good, payload: { ...good.payload, rows: -1 } }, 'payload.rows'],
      [{ ...good, signature: { ...good.signature, alg: 'RS256' } }, 'signature.alg'],
      [{ ...good, signature: { ...good.signature, key_id: 'k1' } }, 'signature.key_id'],
      [{ ...good, signature: { ...good.signature, value: 'a+b/' } }, 'signature.value'],
      [{ ...good, public_key: 'a b' }, 'public_key'],
      [{ ...good, schema_version: 'cert.v3' }, 'schema_version'],
      [{ ...good, extra: 1 }, ''],
      ['a string', ''],
    ];
    for (const [entry, field] of cases) {
      const problems = problemsOf(JSON.stringify([good, entry]));
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.every((p) => p.index === 1)).toBe(true);
      expect(problems.map((p) => p.field)).toContain(field);
    }
  });

  it('refuses a payload that cannot be canonicalized (a lone surrogate)', () => {
    const m = legacyManifest(signer);
    const text = JSON.stringify(m).replace('"legacy.example.org"', '"\\ud800"');
    expect(problemsOf(text)).toEqual([{ index: 0, field: 'payload', message: expect.stringMatching(/canonicalized/) }]);
  });
  it('refuses a timestamp PostgreSQL cannot store (UTC year 0), and U+0000 anywhere in the payload, as a problem of the file', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ timestamp: '0000-06-01T00:00:00Z' }, 'payload.timestamp'],
      [{ timestamp: '0001-01-01T00:30:00+01:00' }, 'payload.timestamp'],
      [{ issuer: 'legacy\u0000example' }, 'payload.issuer'],
      [{ note: { deep: ['a\u0000b'] } }, 'payload.note.deep.0'],
      [{ ['a\u0000b']: 1 }, 'payload.a\\u0000b'],
    ];
    for (const [overrides, field] of cases) {
      expect(problemsOf(JSON.stringify([legacyManifest(signer), legacyManifest(signer, overrides)]))).toEqual([{ index: 1, field, message: expect.any(String) }]);
    }
    // The first and last storable instants are fine.
    expect(parse([legacyManifest(signer, { timestamp: '0001-01-01T00:00:00Z' }), legacyManifest(signer, { timestamp: '9999-12-31T23:59:59Z' })])).toHaveLength(2);
  });
});

describe('planLegacyImport', () => {
  const kek = randomBytes(32);
  const signer = legacySigner();
  const none = () => undefined;

  it('plans the import of good certificates and registers their key once, dated at its first use', () => {
    const ring = KeyRing.create(kek);
    const certs = parse([legacyManifest(signer, { timestamp: '2024-03-01T00:00:00Z' }), legacyManifest(signer, { timestamp: '2023-12-31T23:00:00-02:00' })]);
    const plan = planLegacyImport(ring, certs, none, ORG, NOW);
    expect(plan.refused).toEqual([]);
    expect(plan.toImport).toHaveLength(2);
    expect(plan.keysAdded).toEqual([
      { key_id: signer.keyId, algorithm: 'Ed25519', public_key: signer.publicKey, created_at: '2024-01-01T01:00:00.000Z', status: 'retired', retired_at: NOW.toISOString(), revoked_at: null },
    ]);
    expect(ring.get(signer.keyId)?.status).toBe('retired');
  });

  it('accepts a certificate without public_key when the key is known (given elsewhere in the file, or registered)', () => {
    const plan = planLegacyImport(KeyRing.create(kek), parse([legacyManifest(signer, {}, { withPublicKey: false }), legacyManifest(signer)]), none, ORG, NOW);
    expect(plan.refused).toEqual([]);
    const ring = KeyRing.create(kek);
    ring.addVerifyOnly({ key_id: signer.keyId, public_key: signer.publicKey, created_at: '2024-01-01T00:00:00Z' }, NOW);
    const again = planLegacyImport(ring, parse(legacyManifest(signer, {}, { withPublicKey: false })), none, ORG, NOW);
    expect(again).toMatchObject({ refused: [], keysAdded: [] });
    expect(again.toImport).toHaveLength(1);
  });

  it('refuses, with a reason per certificate: forged signature, unknown key, other schema, key id conflict, future date', () => {
    const other = legacySigner();
    const forged = legacyManifest(signer);
    forged.signature.value = legacySignature(other, forged.payload); // signed by someone else
    const tampered = legacyManifest(signer);
    tampered.payload.rows = 13;
    const v9 = legacyManifest(signer, { schema_version: 'cert.v9' });
    const v1 = legacyManifest(signer, { schema_version: 'service.cert.v1' });
    const unknown = legacyManifest(other, {}, { withPublicKey: false });
    const conflicting = { ...legacyManifest(signer), public_key: other.publicKey };
    const future = legacyManifest(signer, { timestamp: '2025-06-02T00:00:00Z' });
    const good = legacyManifest(signer);
    const plan = planLegacyImport(KeyRing.create(kek), parse([good, forged, tampered, v9, v1, unknown, conflicting, future]), none, ORG, NOW);
    expect(plan.refused.map((r) => [r.index, r.reason])).toEqual([
      [1, 'signature_invalid'],
      [2, 'signature_invalid'],
      [3, 'unsupported_schema_version'],
      [4, 'unsupported_schema_version'],
      [5, 'unknown_key'],
      [6, 'key_id_conflict'],
      [7, 'signed_after_retirement'],
    ]);
    expect(plan.refused[0]).toEqual({ index: 1, certificate_id: forged.payload.certification_id, key_id: signer.keyId, reason: 'signature_invalid', message: expect.any(String) });
  });

  it('is idempotent against what is stored, and reports a changed certificate or another organization as a conflict', () => {
    const a = legacyManifest(signer);
    const b = legacyManifest(signer);
    const [ca, cb] = parse([a, b]);
    const stored = new Map<string, ExistingCertificate>([[a.payload.certification_id, { org_id: ORG, imported: true, manifest: ca.manifest }]]);
    const plan = planLegacyImport(KeyRing.create(kek), [ca, cb], (id) => stored.get(id), ORG, NOW);
    expect(plan).toMatchObject({ refused: [], alreadyImported: [a.payload.certification_id] });
    expect(plan.toImport.map((m) => m.payload.certification_id)).toEqual([b.payload.certification_id]);

    const otherOrg = planLegacyImport(KeyRing.create(kek), [ca], (id) => (stored.get(id) ? { ...stored.get(id)!, org_id: 'org_other' } : undefined), ORG, NOW);
    expect(otherOrg.refused.map((r) => r.reason)).toEqual(['certificate_conflict']);
    const issuedHere = planLegacyImport(KeyRing.create(kek), [ca], (id) => (stored.get(id) ? { ...stored.get(id)!, imported: false } : undefined), ORG, NOW);
    expect(issuedHere.refused.map((r) => r.reason)).toEqual(['certificate_conflict']);
    // Same id, other (validly signed) content.
    const changed = legacyManifest(signer, { certification_id: a.payload.certification_id, rows: 99 });
    const conflict = planLegacyImport(KeyRing.create(kek), parse(changed), (id) => stored.get(id), ORG, NOW);
    expect(conflict.refused).toEqual([expect.objectContaining({ index: 0, certificate_id: a.payload.certification_id, reason: 'certificate_conflict' })]);
  });

  it('counts a certificate repeated in one file once, and refuses two different ones under one id', () => {
    const a = legacyManifest(signer);
    const twice = planLegacyImport(KeyRing.create(kek), parse([a, a]), none, ORG, NOW);
    expect(twice).toMatchObject({ refused: [] });
    expect(twice.toImport).toHaveLength(1);
    const changed = legacyManifest(signer, { certification_id: a.payload.certification_id, rows: 1 });
    expect(planLegacyImport(KeyRing.create(kek), parse([a, changed]), none, ORG, NOW).refused.map((r) => [r.index, r.reason])).toEqual([[1, 'certificate_conflict']]);
  });
});
