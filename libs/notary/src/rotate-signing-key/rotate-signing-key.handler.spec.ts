import { randomBytes } from 'node:crypto';
import { ROTATION_GRACE_MS } from '@app/crypto';
import { InMemoryEventStore } from '@app/event-store';
import { verifyCertificate } from '@app/sdk';
import { signingMessage } from '../domain/certificate';
import { SIGNING_KEY_CREATED, SIGNING_KEY_RETIRED, SIGNING_KEYS_STREAM } from '../domain/signing-key-ring.aggregate';
import { InMemorySigningKeySecrets, SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { RotateSigningKeyCommand } from './rotate-signing-key.command';
import { RotateSigningKeyHandler } from './rotate-signing-key.handler';

describe('RotateSigningKeyHandler (on the in-memory store)', () => {
  const kek = randomBytes(32);
  let store: InMemoryEventStore;
  let secrets: InMemorySigningKeySecrets;
  let keys: SigningKeyRepository;
  let ring: SigningKeyStore;
  // The store's clock, which dates what is decided holding a key's row (null: the real time).
  let now: Date | null;
  beforeEach(async () => {
    now = null;
    store = new InMemoryEventStore(() => now ?? new Date());
    secrets = new InMemorySigningKeySecrets();
    keys = new SigningKeyRepository(store, secrets);
    ring = new SigningKeyStore(keys, kek);
    await ring.start();
  });

  it('retires the active key and activates a new one, public facts in events and rows, the private key sealed beside', async () => {
    const first = ring.current.active();
    const at = new Date('2026-03-01T12:00:00.000Z');
    now = at;
    const result = await new RotateSigningKeyHandler(keys, kek).execute(new RotateSigningKeyCommand());
    // The retired key verifies what is dated up to the grace after the rotation (a process that has not reloaded yet still signs with it).
    expect(result.retired).toMatchObject({ key_id: first.key_id, status: 'retired', retired_at: new Date(at.getTime() + ROTATION_GRACE_MS).toISOString() });
    expect(result.activated).toMatchObject({ status: 'active', created_at: at.toISOString() });
    // This process's ring follows at once, and signs with the new key.
    expect(ring.current.active().key_id).toBe(result.activated.key_id);
    expect(ring.current.sign(Buffer.from('x')).key_id).toBe(result.activated.key_id);

    const events = await store.readStream(SIGNING_KEYS_STREAM);
    expect(events.map((e) => e.type)).toEqual([SIGNING_KEY_CREATED, SIGNING_KEY_RETIRED, SIGNING_KEY_CREATED]);
    expect(JSON.stringify(events)).not.toMatch(/private|encrypted|v1\./);
    expect([...secrets.sealed.keys()].sort()).toEqual([first.key_id, result.activated.key_id].sort());
    expect(store.rows('signing_keys').map((r) => [r.key_id, r.status])).toEqual(
      expect.arrayContaining([
        [first.key_id, 'retired'],
        [result.activated.key_id, 'active'],
      ]),
    );
  });

  it('decides again when another process changed the ring first, and a lost append leaves no sealed key behind', async () => {
    const other = new SigningKeyRepository(store, secrets);
    const state = await keys.load();
    // Another process rotates between this handler's load and save: the first save loses.
    const realLoad = keys.load.bind(keys);
    let loads = 0;
    jest.spyOn(keys, 'load').mockImplementation(async () => {
      if (loads++ === 0) {
        await new RotateSigningKeyHandler(other, kek).execute(new RotateSigningKeyCommand());
        return state;
      }
      return realLoad();
    });
    const result = await new RotateSigningKeyHandler(keys, kek).execute(new RotateSigningKeyCommand());
    expect(loads).toBeGreaterThanOrEqual(2); // the handler loaded again (and this process's ring reloaded)
    const final = await realLoad();
    expect(final.keys.filter((k) => k.status === 'active').map((k) => k.key_id)).toEqual([result.activated.key_id]);
    expect(final.keys).toHaveLength(3);
    // Exactly the recorded keys have sealed private keys: the losing decision's was discarded.
    expect([...secrets.sealed.keys()].sort()).toEqual(final.keys.map((k) => k.key_id).sort());
  });

  it('a certificate another process signs with the old key while the rotation is being committed still verifies, on the server and in the SDK', async () => {
    // Another process: its own repository, so nothing this process announces reaches it; it still holds the ring before the rotation.
    const otherProcess = new SigningKeyStore(new SigningKeyRepository(store, secrets), kek);
    await otherProcess.start();
    const oldKey = ring.current.active().key_id;
    const at = new Date();
    now = at;
    await new RotateSigningKeyHandler(keys, kek).execute(new RotateSigningKeyCommand());
    // Issued by the other process a moment after the rotation was decided, before it heard of it.
    const payload = {
      schema_version: 'service.cert.v1',
      certification_id: '9b2f4c1e-3d5a-4e6f-8a7b-1c2d3e4f5a6b',
      timestamp: new Date(at.getTime() + 500).toISOString(),
      issuer: 'localhost',
      dataset_hash: `sha256:${'a'.repeat(64)}`,
      algorithm: 'sha256',
      rows: 0,
      columns: 0,
    };
    const signed = otherProcess.current.sign(signingMessage(payload));
    expect(signed.key_id).toBe(oldKey);
    expect(ring.current.verify(oldKey, signingMessage(payload), signed.signature, new Date(payload.timestamp))).toEqual({ valid: true });
    const manifest = { schema_version: 'service.manifest.v1', payload, signature: { alg: 'Ed25519', key_id: oldKey, value: signed.signature.toString('base64url') } };
    expect(verifyCertificate(manifest, { keys: ring.current.list() })).toMatchObject({ valid: true, key_status: 'retired' });
    // Past the grace, the retired key verifies nothing.
    const late = { ...payload, timestamp: new Date(at.getTime() + ROTATION_GRACE_MS + 1).toISOString() };
    expect(ring.current.verify(oldKey, signingMessage(late), otherProcess.current.sign(signingMessage(late)).signature, new Date(late.timestamp))).toEqual({ valid: false, reason: 'signed_after_retirement' });
    await otherProcess.stop();
  });
});
