import type { EventStore, NewEvent, SqlDatabase, SqlExecutor, StreamAppend } from '@app/event-store';
import { SqlEventStore, WrongExpectedVersion } from '@app/event-store';
import {
  foldSigningKeys,
  SealedSigningKey,
  SigningKeyDecision,
  SigningKeyEvent,
  SigningKeyRingState,
  SIGNING_KEYS_STREAM,
} from '../domain/signing-key-ring.aggregate';
import { SIGNING_KEY_QUEUE } from './signing-key-guard';
import { signingKeysProjection } from './signing-key.projection';

/** Told (NOTIFY on PostgreSQL, in-process when embedded) after every committed change of the ring. */
export const SIGNING_KEYS_CHANNEL = 'sigil_signing_keys';

/**
 * The sealed private keys (AES-256-GCM under the key-encryption key), in their own table: they
 * never enter an event. A new key's sealed private key is stored before its event is appended
 * (a key is never recorded without one) and discarded when that append loses its race.
 */
export abstract class SigningKeySecrets {
  abstract add(sealed: SealedSigningKey[]): Promise<void>;
  abstract discard(keyIds: string[]): Promise<void>;
  /** Every sealed private key by key id (verify-only keys have none). */
  abstract all(): Promise<Map<string, string>>;
}

export class SqlSigningKeySecrets extends SigningKeySecrets {
  constructor(private readonly db: SqlExecutor) {
    super();
  }

  async add(sealed: SealedSigningKey[]): Promise<void> {
    if (sealed.length === 0) return;
    await this.db.query(
      `INSERT INTO signing_key_secrets (key_id, encrypted_private_key)
       SELECT * FROM unnest($1::uuid[], $2::text[]) ON CONFLICT (key_id) DO NOTHING`,
      [sealed.map((s) => s.key_id), sealed.map((s) => s.encrypted_private_key)],
    );
  }

  async discard(keyIds: string[]): Promise<void> {
    if (keyIds.length === 0) return;
    await this.db.query('DELETE FROM signing_key_secrets WHERE key_id = ANY($1::uuid[])', [keyIds]);
  }

  async all(): Promise<Map<string, string>> {
    const rows = await this.db.query<{ key_id: string; encrypted_private_key: string }>('SELECT key_id, encrypted_private_key FROM signing_key_secrets');
    return new Map(rows.map((r) => [r.key_id, r.encrypted_private_key]));
  }
}

/** Specs: the sealed keys in memory. */
export class InMemorySigningKeySecrets extends SigningKeySecrets {
  readonly sealed = new Map<string, string>();

  async add(sealed: SealedSigningKey[]): Promise<void> {
    for (const s of sealed) if (!this.sealed.has(s.key_id)) this.sealed.set(s.key_id, s.encrypted_private_key);
  }

  async discard(keyIds: string[]): Promise<void> {
    for (const id of keyIds) this.sealed.delete(id);
  }

  async all(): Promise<Map<string, string>> {
    return new Map(this.sealed);
  }
}

/**
 * The signing-keys stream through the EventStore port: the only code touching the signing-key
 * tables. Appends at the revision the decision was made on (a lost race throws
 * WrongExpectedVersion: decide again), with the signing_keys projection registered by name, and
 * the sealed private keys stored beside the append. Committed changes are announced to this
 * process's listeners at once and to every other process through NOTIFY.
 */
export class SigningKeyRepository {
  private readonly listeners: (() => Promise<void>)[] = [];

  constructor(
    private readonly store: EventStore,
    private readonly secrets: SigningKeySecrets,
    private readonly db?: Pick<SqlDatabase, 'notify' | 'listen'>,
    /** The same database as a SQL store, for a decision taken while a key's row is held (decideHoldingKey). */
    private readonly sql?: { db: SqlDatabase; store: SqlEventStore },
  ) {
    store.registerProjection(signingKeysProjection);
  }

  /** On the read-model database beside the store (the server, the CLI, specs on a real store). */
  static on(db: SqlDatabase, store: EventStore): SigningKeyRepository {
    // A revocation decides holding the key's row (decideHoldingKey): only a SQL store can.
    if (!(store instanceof SqlEventStore)) throw new Error('the signing keys beside a SQL database need its SQL event store');
    return new SigningKeyRepository(store, new SqlSigningKeySecrets(db), db, { db, store });
  }

  /** The ring as its stream says, with the sealed private keys held (read after the stream: a recorded key's secret is always there). */
  async load(): Promise<SigningKeyRingState> {
    const state = foldSigningKeys(await this.store.readStream(SIGNING_KEYS_STREAM));
    const sealed = await this.secrets.all();
    return { ...state, keys: state.keys.map((k) => ({ ...k, encrypted_private_key: sealed.get(k.key_id) ?? null })) };
  }

  /** Saves a decision made on `state`: the sealed keys first, then the events at the state's revision; announced once committed. */
  async save(state: SigningKeyRingState, decision: Pick<SigningKeyDecision<unknown>, 'events' | 'sealed'>): Promise<void> {
    if (decision.events.length === 0) return;
    await this.secrets.add(decision.sealed);
    try {
      await this.store.append(SIGNING_KEYS_STREAM, decision.events as NewEvent[], { expectedRevision: expectedOf(state) });
    } catch (err) {
      // Only a refused append is known to have written nothing; then its keys must not linger.
      if (err instanceof WrongExpectedVersion) await this.secrets.discard(decision.sealed.map((s) => s.key_id));
      throw err;
    }
    await this.announce();
  }

  /**
   * Decides a change of the ring while the row of the key it changes (`keyOf`, e.g. the key to
   * revoke, the active key a rotation retires) is held, as of the database's clock at that moment,
   * and saves it. Every record signed with a key holds that row shared until it commits
   * (notRevokedSigningKey), and chose its signing time before; taking the row for update waits
   * for all of them to commit and turns away the rest, so for a revocation every record accepted
   * under the key is dated before the time decided here. (Decided before its append took the row,
   * a revocation's time could precede records committed just ahead of it, each answered and then
   * refused by every verifier.) PostgreSQL lets a new sharer of a row overtake a waiting writer, so
   * the key's advisory lock, which records queue on (SIGNING_KEY_QUEUE), is taken first: the change
   * waits only for the records already holding the row. The stream's head comes before both, the
   * order an append to the stream takes it and then the row its projection changes.
   *
   * The locks, the clock, the sealed keys and the events share one transaction, which only a SQL
   * store has; the in-memory store (specs) appends one thing at a time and decides as of `now`.
   */
  async decideHoldingKey<R>(keyOf: (state: SigningKeyRingState) => string | null, now: Date, decide: (state: SigningKeyRingState, now: Date) => SigningKeyDecision<R>): Promise<R> {
    // Read before the transaction: an embedded database runs one transaction at a time, and the
    // state's revision is checked by the append (a change meanwhile: WrongExpectedVersion, decide again).
    const state = await this.load();
    if (!this.sql) {
      const decision = decide(state, now);
      await this.save(state, decision);
      return decision.result;
    }
    const { db, store } = this.sql;
    const keyId = keyOf(state);
    const decision = await db.transaction(async (tx) => {
      await store.holdStream(tx, SIGNING_KEYS_STREAM);
      if (keyId !== null) {
        await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SIGNING_KEY_QUEUE, keyId]);
        const held = await tx.query('SELECT 1 FROM signing_keys WHERE key_id = $1 FOR NO KEY UPDATE', [keyId]);
        if (held.length === 0 && state.keys.some((k) => k.key_id === keyId)) {
          throw new Error(`signing key ${keyId} is in the ring but not in signing_keys: rebuild the ${signingKeysProjection.name} projection`);
        }
      }
      // A statement of its own: the clock is read once the row is held, not while waiting for it.
      // Rounded up to the next millisecond (the precision records are dated in), so a record
      // dated within the millisecond the row was taken is still before the change.
      const [{ held_at }] = await tx.query<{ held_at: Date | string }>("SELECT date_trunc('milliseconds', clock_timestamp()) + interval '1 millisecond' AS held_at");
      const made = decide(state, new Date(held_at));
      if (made.events.length > 0) {
        await new SqlSigningKeySecrets(tx).add(made.sealed);
        await store.appendIn(tx, SIGNING_KEYS_STREAM, made.events as NewEvent[], expectedOf(state));
      }
      return made;
    });
    if (decision.events.length > 0) {
      store.announceCommitted();
      await this.announce();
    }
    return decision.result;
  }

  /** The append of verify-only keys for a caller's appendMany (no sealed key: they have none). */
  importAppend(events: SigningKeyEvent[]): StreamAppend {
    return { stream: SIGNING_KEYS_STREAM, events: events as NewEvent[], expected: 'any' };
  }

  /** Runs `listener` (awaited, in this process) whenever a change is announced here. */
  onChange(listener: () => Promise<void>): void {
    this.listeners.push(listener);
  }

  /** After a committed change: this process's listeners, then every other process (NOTIFY). */
  async announce(): Promise<void> {
    await Promise.all(this.listeners.map((l) => l().catch(() => undefined)));
    await this.db?.notify(SIGNING_KEYS_CHANNEL).catch(() => undefined);
  }

  /** Hears changes announced by any process; resolves with the way to stop listening. */
  async listen(onChange: () => void): Promise<() => Promise<void>> {
    if (!this.db) return async () => undefined;
    return this.db.listen(SIGNING_KEYS_CHANNEL, onChange);
  }
}

const expectedOf = (state: SigningKeyRingState) => state.revision ?? 'no_stream';

