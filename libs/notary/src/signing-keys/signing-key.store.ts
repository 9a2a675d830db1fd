import { DecryptionError, KeyRing, PublicSigningKey } from '@app/crypto';
import { createFirstSigningKey, keyRingOf } from '../domain/signing-key-ring.aggregate';
import { RevokeSigningKeyCommand, RevokeSigningKeyResult } from '../revoke-signing-key/revoke-signing-key.command';
import { RevokeSigningKeyHandler } from '../revoke-signing-key/revoke-signing-key.handler';
import { RotateSigningKeyCommand, RotateSigningKeyResult } from '../rotate-signing-key/rotate-signing-key.command';
import { RotateSigningKeyHandler } from '../rotate-signing-key/rotate-signing-key.handler';
import { SigningKeyRepository } from './signing-key.repository';
import { retryOnConflict } from '@app/event-store';

export { SIGNING_KEYS_STREAM } from '../domain/signing-key-ring.aggregate';

/**
 * The authority's signing keys in this process: the ring that signs and verifies. Each change is
 * an event on the `signing-keys` stream (public facts only), written by SigningKeyRepository; the
 * sealed private keys sit in their own table. Every process keeps the ring in memory and reloads
 * it when any process changes it (NOTIFY on PostgreSQL), so a revoked key stops signing
 * everywhere at once.
 */
export class SigningKeyStore {
  private ring: KeyRing | null = null;
  private revision = -1;
  private unlisten: (() => Promise<void>) | null = null;
  private refreshing: Promise<KeyRing> | null = null;
  private refreshNext: Promise<KeyRing> | null = null;

  constructor(
    readonly keys: SigningKeyRepository,
    private readonly kek: Buffer,
  ) {
    keys.onChange(async () => void (await this.reload()));
  }

  /**
   * Loads the ring, creating the first key if there is none: several processes starting on an
   * empty database race on the stream's first revision, one wins and the others load its key.
   */
  async start(): Promise<KeyRing> {
    if (!this.unlisten) this.unlisten = await this.keys.listen(() => void this.reload().catch(() => undefined));
    await retryOnConflict(async () => {
      const state = await this.keys.load();
      const first = createFirstSigningKey(state, { kek: this.kek, now: new Date() });
      if (first) await this.keys.save(state, first);
    });
    const ring = await this.reload();
    try {
      ring.sign(Buffer.from('startup check'));
    } catch (err) {
      if (err instanceof DecryptionError) {
        throw new Error('KEY_ENCRYPTION_KEY does not decrypt the stored signing keys: start with the key they were sealed under');
      }
      throw err;
    }
    return ring;
  }

  /** Reads the ring again; a reload that finishes after a fresher one keeps the fresher ring. */
  async reload(): Promise<KeyRing> {
    const state = await this.keys.load();
    const revision = state.revision ?? -1;
    if (!this.ring || revision >= this.revision) {
      this.ring = keyRingOf(state, this.kek);
      this.revision = revision;
    }
    return this.ring;
  }

  /**
   * A reload that starts after this call (the ring was found out of date: a certificate signed
   * with it was refused). Callers that ask while one runs share the next one, so a burst of
   * refusals reads the keys twice at most, never with a read that began before the refusal.
   */
  refresh(): Promise<KeyRing> {
    if (!this.refreshing) {
      const run = this.reload().finally(() => {
        if (this.refreshing === run) this.refreshing = null;
      });
      return (this.refreshing = run);
    }
    this.refreshNext ??= this.refreshing
      .catch(() => undefined)
      .then(() => {
        this.refreshNext = null;
        return this.refresh();
      });
    return this.refreshNext;
  }

  get current(): KeyRing {
    if (!this.ring) throw new Error('SigningKeyStore.start() has not run');
    return this.ring;
  }

  /** The rotate-signing-key use case; this process's ring has the new key when it returns. */
  rotate(): Promise<RotateSigningKeyResult> {
    return new RotateSigningKeyHandler(this.keys, this.kek).execute(new RotateSigningKeyCommand());
  }

  /** The revoke-signing-key use case (not_found for an unknown key). */
  revoke(keyId: string): Promise<RevokeSigningKeyResult> {
    return new RevokeSigningKeyHandler(this.keys, this.kek).execute(new RevokeSigningKeyCommand(keyId));
  }

  /** After a change committed elsewhere in this process: reload here, and tell the other processes. */
  async announce(): Promise<void> {
    await this.keys.announce();
  }

  /** The public keys, as published. */
  list(): PublicSigningKey[] {
    return this.current.list();
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = null;
  }
}
