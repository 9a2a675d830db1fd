import { randomBytes, randomUUID } from 'node:crypto';
import { DomainError } from '@app/core';
import { InMemoryEventStore } from '@app/event-store';
import { SIGNING_KEY_CREATED, SIGNING_KEY_RETIRED, SIGNING_KEY_REVOKED, SIGNING_KEYS_STREAM } from '../domain/signing-key-ring.aggregate';
import { RotateSigningKeyCommand } from '../rotate-signing-key/rotate-signing-key.command';
import { RotateSigningKeyHandler } from '../rotate-signing-key/rotate-signing-key.handler';
import { InMemorySigningKeySecrets, SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { RevokeSigningKeyCommand } from './revoke-signing-key.command';
import { RevokeSigningKeyHandler } from './revoke-signing-key.handler';

describe('RevokeSigningKeyHandler (on the in-memory store)', () => {
  const kek = randomBytes(32);
  let store: InMemoryEventStore;
  let keys: SigningKeyRepository;
  let ring: SigningKeyStore;
  let sut: RevokeSigningKeyHandler;
  // The store's clock, which dates what is decided holding a key's row (null: the real time).
  let now: Date | null;
  beforeEach(async () => {
    now = null;
    store = new InMemoryEventStore(() => now ?? new Date());
    keys = new SigningKeyRepository(store, new InMemorySigningKeySecrets());
    ring = new SigningKeyStore(keys, kek);
    await ring.start();
    sut = new RevokeSigningKeyHandler(keys, kek);
  });

  it('revoking the active key activates a fresh one at once; the ring stops signing with the revoked key', async () => {
    const compromised = ring.current.active();
    const at = new Date('2026-04-01T00:00:00.000Z');
    now = at;
    const result = await sut.execute(new RevokeSigningKeyCommand(compromised.key_id));
    expect(result.revoked).toMatchObject({ key_id: compromised.key_id, status: 'revoked', revoked_at: at.toISOString() });
    expect(result.activated).toMatchObject({ status: 'active' });
    expect(ring.current.sign(Buffer.from('x')).key_id).toBe(result.activated!.key_id);
    expect(ring.current.get(compromised.key_id)?.status).toBe('revoked');
    expect((await store.readStream(SIGNING_KEYS_STREAM)).map((e) => e.type)).toEqual([SIGNING_KEY_CREATED, SIGNING_KEY_REVOKED, SIGNING_KEY_CREATED]);
    expect(store.rows('signing_keys').find((r) => r.key_id === compromised.key_id)).toMatchObject({ status: 'revoked', revoked_at: at.toISOString() });
  });

  it('revoking a retired key activates nothing; revoking it again records nothing', async () => {
    const old = ring.current.active();
    await new RotateSigningKeyHandler(keys, kek).execute(new RotateSigningKeyCommand());
    const result = await sut.execute(new RevokeSigningKeyCommand(old.key_id));
    expect(result).toEqual({ revoked: expect.objectContaining({ key_id: old.key_id, status: 'revoked' }), activated: null });
    const again = await sut.execute(new RevokeSigningKeyCommand(old.key_id));
    expect(again).toEqual(result);
    expect((await store.readStream(SIGNING_KEYS_STREAM)).map((e) => e.type)).toEqual([SIGNING_KEY_CREATED, SIGNING_KEY_RETIRED, SIGNING_KEY_CREATED, SIGNING_KEY_REVOKED]);
  });

  it('refuses an unknown key with not_found and records nothing', async () => {
    const unknown = randomUUID();
    const refused = sut.execute(new RevokeSigningKeyCommand(unknown));
    await expect(refused).rejects.toBeInstanceOf(DomainError);
    await expect(sut.execute(new RevokeSigningKeyCommand(unknown))).rejects.toMatchObject({ code: 'not_found', message: `signing key ${unknown} not found` });
    expect(await store.readStream(SIGNING_KEYS_STREAM)).toHaveLength(1);
  });
});
