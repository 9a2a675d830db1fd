import { randomBytes, randomUUID } from 'node:crypto';
import { DomainError } from '@app/core';
import { InMemoryEventStore } from '@app/event-store';
import { REVOCATION_SETTLE_MS, SIGNING_KEY_CREATED, SIGNING_KEY_RETIRED, SIGNING_KEY_REVOKED, SIGNING_KEYS_STREAM } from '../domain/signing-key-ring.aggregate';
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
  let secrets: InMemorySigningKeySecrets;
  // The store's clock: when an append holds its rows (null: the real time).
  let storeNow: Date | null;
  beforeEach(async () => {
    storeNow = null;
    store = new InMemoryEventStore(() => storeNow ?? new Date());
    secrets = new InMemorySigningKeySecrets();
    keys = new SigningKeyRepository(store, secrets);
    ring = new SigningKeyStore(keys, kek);
    await ring.start();
    sut = new RevokeSigningKeyHandler(keys, kek);
  });

  it('revoking the active key activates a fresh one at once; the ring stops signing with the revoked key', async () => {
    const compromised = ring.current.active();
    const at = new Date('2026-04-01T00:00:00.000Z');
    storeNow = new Date('2026-04-01T00:00:00.010Z');
    const result = await sut.execute(new RevokeSigningKeyCommand(compromised.key_id, at));
    // In effect REVOCATION_SETTLE_MS after it was decided, the time by which it had to be recorded.
    const revokedAt = new Date(at.getTime() + REVOCATION_SETTLE_MS).toISOString();
    expect(result.revoked).toMatchObject({ key_id: compromised.key_id, status: 'revoked', revoked_at: revokedAt });
    expect(result.activated).toMatchObject({ created_at: at.toISOString() });
    expect(result.activated).toMatchObject({ status: 'active' });
    expect(ring.current.sign(Buffer.from('x')).key_id).toBe(result.activated!.key_id);
    expect(ring.current.get(compromised.key_id)?.status).toBe('revoked');
    expect((await store.readStream(SIGNING_KEYS_STREAM)).map((e) => e.type)).toEqual([SIGNING_KEY_CREATED, SIGNING_KEY_REVOKED, SIGNING_KEY_CREATED]);
    expect(store.rows('signing_keys').find((r) => r.key_id === compromised.key_id)).toMatchObject({ status: 'revoked', revoked_at: revokedAt });
  });

  it('decides again, as of the time it is then, when the revocation was not recorded by its time; the key made for the late one is discarded', async () => {
    const compromised = ring.current.active();
    const at = new Date('2026-04-01T00:00:00.000Z');
    // The append held the key's row only at its revoked_at (it waited on records being signed with the key meanwhile).
    storeNow = new Date(at.getTime() + REVOCATION_SETTLE_MS);
    const before = Date.now();
    const result = await sut.execute(new RevokeSigningKeyCommand(compromised.key_id, at));
    expect(Date.parse(result.revoked.revoked_at!)).toBeGreaterThanOrEqual(before + REVOCATION_SETTLE_MS);
    const types = (await store.readStream(SIGNING_KEYS_STREAM)).map((e) => e.type);
    expect(types).toEqual([SIGNING_KEY_CREATED, SIGNING_KEY_REVOKED, SIGNING_KEY_CREATED]);
    expect([...secrets.sealed.keys()].sort()).toEqual([compromised.key_id, result.activated!.key_id].sort());
  });

  it('answers a retryable concurrent_modification, having written nothing, when the revocation is never recorded in time', async () => {
    const compromised = ring.current.active();
    storeNow = new Date(Date.now() + 3_600_000);
    await expect(sut.execute(new RevokeSigningKeyCommand(compromised.key_id))).rejects.toMatchObject({ code: 'concurrent_modification' });
    expect(await store.readStream(SIGNING_KEYS_STREAM)).toHaveLength(1);
    expect([...secrets.sealed.keys()]).toEqual([compromised.key_id]);
    expect(store.rows('signing_keys').find((r) => r.key_id === compromised.key_id)).toMatchObject({ status: 'active', revoked_at: null });
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
