import { fromBase64Url as serverFromBase64Url } from '@app/crypto';
import { certificateView, signingMessage } from '@app/notary';
import { ServerSigner } from '../../test/server-signer';
import { verifyCertificate } from './certificate';

const T = (iso: string) => new Date(iso);
const flipChar = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);

describe('verifyCertificate (signed by the server code, verified by the SDK)', () => {
  it('accepts a genuine certificate and reports its facts', () => {
    const server = new ServerSigner();
    const payload = server.payload();
    const manifest = server.manifest(payload);
    const result = verifyCertificate(manifest, server.keysDocument());
    expect(result).toEqual({
      valid: true,
      key_id: server.ring.active().key_id,
      key_status: 'active',
      warnings: [],
      schema_version: 'service.cert.v1',
      is_deprecated: false,
      certificate_id: payload.certification_id,
      issued_at: payload.timestamp,
      payload_hash: `sha256:${signingMessage(payload).toString('ascii')}`,
      artifact_hash_match: null,
    });
  });

  it('accepts the Certificate resource form (signature "ed25519:…", no key id) by trying each key', () => {
    const server = new ServerSigner(T('2025-01-01T00:00:00Z'));
    server.ring.rotate(T('2025-01-15T00:00:00Z'));
    const manifest = server.manifest(server.payload());
    const cert = JSON.parse(JSON.stringify(certificateView(manifest)));
    expect(verifyCertificate(cert, server.keysDocument())).toMatchObject({ valid: true, key_id: manifest.signature.key_id, key_status: 'active' });
    expect(verifyCertificate({ ...cert, rows: 1 }, server.keysDocument())).toMatchObject({ valid: false, reason: 'signature_invalid' });
  });

  it('refuses any tampered payload field, signature character, key id or public key', () => {
    const server = new ServerSigner();
    const manifest = server.manifest(server.payload({ inner_artifacts: { 'a.csv': { sha256: 'sha256:' + '0'.repeat(64) } } }));
    const keys = server.keysDocument();
    const tampered = [
      { ...manifest, payload: { ...manifest.payload, issuer: 'Someone else' } },
      { ...manifest, payload: { ...manifest.payload, rows: 1 } },
      { ...manifest, payload: { ...manifest.payload, extra: true } },
      { ...manifest, payload: { ...manifest.payload, inner_artifacts: { 'a.csv': { sha256: 'sha256:' + '1'.repeat(64) } } } },
    ];
    for (const t of tampered) expect(verifyCertificate(t, keys)).toMatchObject({ valid: false, reason: 'signature_invalid' });
    for (let i = 0; i < manifest.signature.value.length; i++) {
      const value = flipChar(manifest.signature.value, i);
      const result = verifyCertificate({ ...manifest, signature: { ...manifest.signature, value } }, keys);
      expect([i, result.valid, result.reason]).toEqual([i, false, 'signature_invalid']);
    }
    expect(verifyCertificate({ ...manifest, signature: { ...manifest.signature, key_id: crypto.randomUUID() } }, keys)).toMatchObject({ valid: false, reason: 'unknown_key' });
    const otherKey = new ServerSigner().keysDocument().keys[0].public_key;
    const swapped = { keys: keys.keys.map((k) => ({ ...k, public_key: otherKey })) };
    expect(verifyCertificate(manifest, swapped)).toMatchObject({ valid: false, reason: 'signature_invalid' });
    expect(verifyCertificate(manifest, { keys: keys.keys.map((k) => ({ ...k, public_key: 'AAAA' })) })).toMatchObject({ valid: false, reason: 'invalid_key' });
    expect(verifyCertificate(manifest, { keys: keys.keys.map((k) => ({ ...k, algorithm: 'RSA' })) })).toMatchObject({ valid: false, reason: 'unsupported_algorithm' });
    expect(verifyCertificate({ ...manifest, signature: { ...manifest.signature, alg: 'HS256' } }, keys)).toMatchObject({ valid: false, reason: 'unsupported_algorithm' });
  });

  it('honours key status exactly as the server key ring does (retired, revoked before/after)', () => {
    const server = new ServerSigner(T('2025-01-01T00:00:00Z'));
    const a = server.ring.active().key_id;
    server.ring.rotate(T('2025-03-01T00:00:00Z')); // a retired
    const b = server.ring.active().key_id;
    server.ring.revoke(a, T('2025-05-01T00:00:00Z')); // a revoked, having been retired
    server.ring.revoke(b, T('2025-06-01T00:00:00Z')); // b revoked while active; c activated
    const c = server.ring.active().key_id;
    const keys = server.keysDocument();

    const cases: Array<[string, string, string, object]> = [
      ['a before retirement', a, '2025-02-01T00:00:00.000Z', { valid: true, key_status: 'revoked', warnings: ['signed_by_revoked_key_before_revocation'] }],
      ['a after retirement, before revocation', a, '2025-04-01T00:00:00.000Z', { valid: false, reason: 'signed_after_retirement' }],
      ['a after revocation', a, '2025-05-02T00:00:00.000Z', { valid: false, reason: 'key_revoked' }],
      ['b before its revocation', b, '2025-05-15T00:00:00.000Z', { valid: true, key_status: 'revoked', warnings: ['signed_by_revoked_key_before_revocation'] }],
      ['b after its revocation', b, '2025-06-02T00:00:00.000Z', { valid: false, reason: 'key_revoked', key_status: 'revoked' }],
      ['c, active', c, '2025-06-02T00:00:00.000Z', { valid: true, key_status: 'active', warnings: [] }],
      ['no usable signing time', c, 'not a date', { valid: false, reason: 'invalid_signing_time' }],
    ];
    for (const [name, keyId, timestamp, expected] of cases) {
      const manifest = server.manifest(server.payload({ timestamp }), keyId);
      const sdk = verifyCertificate(manifest, keys);
      expect({ name, ...sdk }).toMatchObject({ name, ...expected });
      // The server's verdict on the same certificate.
      const server_ = server.ring.verify(keyId, signingMessage(manifest.payload), serverFromBase64Url(manifest.signature.value)!, new Date(timestamp));
      expect({ name, valid: sdk.valid, reason: sdk.reason }).toEqual({ name, valid: server_.valid, reason: server_.valid ? undefined : server_.reason });
    }

    // A retired (not revoked) key still verifies what it signed before retirement.
    const s2 = new ServerSigner(T('2025-01-01T00:00:00Z'));
    const old = s2.ring.active().key_id;
    const before = s2.manifest(s2.payload({ timestamp: '2025-01-10T00:00:00.000Z' }));
    s2.ring.rotate(T('2025-01-20T00:00:00Z'));
    expect(verifyCertificate(before, s2.keysDocument())).toMatchObject({ valid: true, key_status: 'retired', warnings: [] });
    expect(verifyCertificate(s2.manifest(s2.payload({ timestamp: '2025-01-21T00:00:00.000Z' }), old), s2.keysDocument())).toMatchObject({
      valid: false,
      reason: 'signed_after_retirement',
      key_status: 'retired',
    });
  });

  it('checks an artifact hash against dataset_hash (tagged or bare hex, any case)', () => {
    const server = new ServerSigner();
    const manifest = server.manifest(server.payload());
    const keys = server.keysDocument();
    const hex = manifest.payload.dataset_hash.slice(7);
    expect(verifyCertificate(manifest, keys, { artifactHash: manifest.payload.dataset_hash })).toMatchObject({ valid: true, artifact_hash_match: true });
    expect(verifyCertificate(manifest, keys, { artifactHash: hex.toUpperCase() })).toMatchObject({ valid: true, artifact_hash_match: true });
    expect(verifyCertificate(manifest, keys, { artifactHash: 'sha256:' + '0'.repeat(64) })).toMatchObject({ valid: false, reason: 'artifact_hash_mismatch', artifact_hash_match: false });
    expect(verifyCertificate(manifest, keys, { artifactHash: 'nonsense' })).toMatchObject({ valid: false, reason: 'artifact_hash_mismatch', artifact_hash_match: false });
  });

  it('given the id asked for, refuses another genuine certificate served in its place', () => {
    const server = new ServerSigner();
    const manifest = server.manifest(server.payload());
    const keys = server.keysDocument();
    const id = manifest.payload.certification_id;
    expect(verifyCertificate(manifest, keys, { certificateId: id })).toMatchObject({ valid: true });
    expect(verifyCertificate(manifest, keys, { certificateId: id.toUpperCase() })).toMatchObject({ valid: true });
    expect(verifyCertificate(manifest, keys, { certificateId: crypto.randomUUID(), artifactHash: manifest.payload.dataset_hash })).toMatchObject({
      valid: false,
      reason: 'certificate_id_mismatch',
      certificate_id: id,
    });
  });

  it('verifies deprecated cert.v2 with is_deprecated and refuses unknown schema versions', () => {
    const server = new ServerSigner();
    const keys = server.keysDocument();
    const legacy = server.manifest(server.payload({ schema_version: 'cert.v2' }));
    expect(verifyCertificate(legacy, keys)).toMatchObject({ valid: true, is_deprecated: true, schema_version: 'cert.v2', warnings: ['deprecated_schema'] });
    // Imported legacy manifests are served with the payload's schema as their label.
    expect(verifyCertificate({ ...legacy, schema_version: 'cert.v2' }, keys)).toMatchObject({ valid: true, is_deprecated: true });
    for (const schema of ['service.cert.v9', 'service.registry.v1', 'constructor', '__proto__']) {
      const m = server.manifest(server.payload({ schema_version: schema }));
      expect(verifyCertificate(m, keys)).toMatchObject({ valid: false, reason: 'unsupported_schema_version', schema_version: schema });
    }
    const genuine = server.manifest(server.payload());
    expect(verifyCertificate({ ...genuine, schema_version: 'service.manifest.v9' }, keys)).toMatchObject({ valid: false, reason: 'unsupported_schema_version' });
  });

  it('answers malformed inputs with a reason and never throws', () => {
    const server = new ServerSigner();
    const manifest = server.manifest(server.payload());
    const keys = server.keysDocument();
    const inputs: unknown[] = [null, undefined, 42, 'x', [], {}, { payload: manifest.payload }, { ...manifest, signature: { value: 'x' } }, { signature: 'rsa:abc' }];
    for (const input of inputs) expect(verifyCertificate(input, keys)).toMatchObject({ valid: false, reason: 'malformed' });
    expect(verifyCertificate({ ...manifest, payload: { ...manifest.payload, issuer: 'x\ud800' } }, keys)).toMatchObject({ valid: false, reason: 'malformed' });
    for (const doc of [null, {}, { keys: 'x' }, { keys: [{ key_id: 1 }] }, { keys: [{ ...keys.keys[0], status: 'lost' }] }]) {
      expect(verifyCertificate(manifest, doc)).toMatchObject({ valid: false, reason: 'invalid_keys_document' });
    }
  });
});
