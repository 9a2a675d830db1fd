import { isoOrNull } from '@app/core';
import { DecryptionError, KeyRing, PublicSigningKey, StoredSigningKey } from '@app/crypto';
import { NewEvent, SqlDatabase, SqlEventStore, SqlExecutor } from '@app/event-store';

export const SIGNING_KEYS_STREAM = 'signing-keys';
const CHANNEL = 'sigil_signing_keys';

interface Row {
  key_id: string;
  algorithm: 'Ed25519';
  public_key: string;
  created_at: Date | string;
  status: StoredSigningKey['status'];
  retired_at: Date | string | null;
  revoked_at: Date | string | null;
  encrypted_private_key: string | null;
}

const iso = isoOrNull;

// Verify-only (imported legacy) keys have no secret row.
const KEYS_SQL = `SELECT k.*, s.encrypted_private_key FROM signing_keys k LEFT JOIN signing_key_secrets s USING (key_id) ORDER BY k.created_at`;
const LOCK = 'SELECT pg_advisory_xact_lock(7355609)';

async function loadStored(executor: SqlExecutor): Promise<StoredSigningKey[]> {
  const rows = await executor.query<Row>(KEYS_SQL);
  return rows.map((r) => ({ ...r, created_at: iso(r.created_at)!, retired_at: iso(r.retired_at), revoked_at: iso(r.revoked_at) }));
}

/**
 * The authority's signing keys, persisted. Each change is an event on the `signing-keys` stream
 * carrying public facts only; the AES-256-GCM sealed private key sits in its own table. Every
 * process keeps the ring in memory and reloads it when another process rotates or revokes
 * (NOTIFY on PostgreSQL), so a revoked key stops signing everywhere at once.
 */
export class SigningKeyStore {
  private ring: KeyRing | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly kek: Buffer,
  ) {}

  /** Loads the ring, creating the first key if there is none (once, whatever the number of processes). */
  async start(): Promise<KeyRing> {
    if (!this.unlisten) this.unlisten = await this.db.listen(CHANNEL, () => void this.reload().catch(() => undefined));
    await this.db.transaction(async (tx) => {
      await tx.query(LOCK);
      const [{ n }] = await tx.query<{ n: string | number }>('SELECT count(*) AS n FROM signing_keys');
      if (Number(n) > 0) return;
      const ring = KeyRing.create(this.kek);
      await this.persist(tx, ring.toStored(), [{ type: 'signing_key.created', data: publicFacts(ring.active()) }]);
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

  async reload(): Promise<KeyRing> {
    this.ring = new KeyRing(this.kek, await loadStored(this.db));
    return this.ring;
  }

  get current(): KeyRing {
    if (!this.ring) throw new Error('SigningKeyStore.start() has not run');
    return this.ring;
  }

  async rotate(now = new Date()): Promise<{ activated: PublicSigningKey; retired: PublicSigningKey | null }> {
    return this.change(async (ring, tx) => {
      const result = ring.rotate(now);
      const events: NewEvent[] = [];
      if (result.retired) events.push({ type: 'signing_key.retired', data: { key_id: result.retired.key_id, retired_at: result.retired.retired_at } });
      events.push({ type: 'signing_key.created', data: publicFacts(result.activated) });
      await this.persist(tx, ring.toStored(), events);
      return result;
    });
  }

  async revoke(keyId: string, now = new Date()): Promise<{ revoked: PublicSigningKey; activated: PublicSigningKey | null }> {
    return this.change(async (ring, tx) => {
      const result = ring.revoke(keyId, now);
      const events: NewEvent[] = [{ type: 'signing_key.revoked', data: { key_id: keyId, revoked_at: result.revoked.revoked_at } }];
      if (result.activated) events.push({ type: 'signing_key.created', data: publicFacts(result.activated) });
      await this.persist(tx, ring.toStored(), events);
      return result;
    });
  }

  /** Applies a change to the freshest ring under a lock, persists it, and tells the other processes. */
  private async change<T>(fn: (ring: KeyRing, tx: SqlExecutor) => Promise<T>): Promise<T> {
    const result = await this.db.transaction(async (tx) => fn(await this.lockIn(tx), tx));
    await this.announce();
    return result;
  }

  /**
   * For a change made inside the caller's transaction (the legacy import): takes the keys lock
   * and returns the freshest ring. Persist with `recordImportedIn`, then `announce()` after commit.
   */
  async lockIn(tx: SqlExecutor): Promise<KeyRing> {
    await tx.query(LOCK);
    return new KeyRing(this.kek, await loadStored(tx));
  }

  /** Records verify-only keys added to `ring` (SigningKeyImported events) in the caller's transaction. */
  async recordImportedIn(tx: SqlExecutor, ring: KeyRing, added: PublicSigningKey[]): Promise<void> {
    if (added.length === 0) return;
    const ids = new Set(added.map((k) => k.key_id));
    const events: NewEvent[] = added.map((k) => ({
      type: 'signing_key.imported',
      data: { ...publicFacts(k), status: k.status, retired_at: k.retired_at, verify_only: true },
    }));
    await this.persist(tx, ring.toStored().filter((k) => ids.has(k.key_id)), events);
  }

  /** After a committed change: reload this process's ring and tell the other processes. */
  async announce(): Promise<void> {
    await this.reload();
    await this.db.notify(CHANNEL).catch(() => undefined);
  }

  private async persist(tx: SqlExecutor, keys: StoredSigningKey[], events: NewEvent[]): Promise<void> {
    await this.store.appendIn(tx, SIGNING_KEYS_STREAM, events);
    for (const k of keys) {
      await tx.query(
        `INSERT INTO signing_keys (key_id, algorithm, public_key, created_at, status, retired_at, revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (key_id) DO UPDATE SET status = EXCLUDED.status, retired_at = EXCLUDED.retired_at, revoked_at = EXCLUDED.revoked_at`,
        [k.key_id, k.algorithm, k.public_key, k.created_at, k.status, k.retired_at, k.revoked_at],
      );
      if (k.encrypted_private_key === null) continue;
      await tx.query('INSERT INTO signing_key_secrets (key_id, encrypted_private_key) VALUES ($1, $2) ON CONFLICT (key_id) DO NOTHING', [
        k.key_id,
        k.encrypted_private_key,
      ]);
    }
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = null;
  }
}

const publicFacts = (k: PublicSigningKey) => ({ key_id: k.key_id, algorithm: k.algorithm, public_key: k.public_key, created_at: k.created_at });
