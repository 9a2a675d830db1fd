import type { EventStore, NewEvent, SqlDatabase, SqlExecutor, StreamAppend } from '@app/event-store';
import { WrongExpectedVersion } from '@app/event-store';
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
  /** The same keys, written in the store's transaction `tx` (EventStore.appendHolding's `within`). */
  abstract within(tx: SqlExecutor): SigningKeySecrets;
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

  within(tx: SqlExecutor): SigningKeySecrets {
    return new SqlSigningKeySecrets(tx);
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

  within(): SigningKeySecrets {
    return this;
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
  ) {
    store.registerProjection(signingKeysProjection);
  }

  /** On the read-model database beside the store (the server, the CLI, specs on a real store). */
  static on(db: SqlDatabase, store: EventStore): SigningKeyRepository {
    return new SigningKeyRepository(store, new SqlSigningKeySecrets(db), db);
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
   * Decides a change of the ring while the row of the key it changes (`keyOf`: the key to revoke,
   * the active key a rotation retires) is held, as of the store's clock then (EventStore.appendHolding),
   * and saves it. Every record signed with a key holds that row shared until it commits
   * (notRevokedSigningKey, which queues on SIGNING_KEY_QUEUE), and chose its signing time before:
   * so a revocation waits for the records already holding the key, is dated after all of them,
   * and the records that come after it find the key revoked. (Decided before its append took the
   * row, a revocation's time could precede records committed just ahead of it, each answered and
   * then refused by every verifier.) The sealed keys are stored with the events, in the store's
   * transaction where it has one.
   */
  async decideHoldingKey<R>(keyOf: (state: SigningKeyRingState) => string | null, decide: (state: SigningKeyRingState, now: Date) => SigningKeyDecision<R>): Promise<R> {
    // Read before: the store's database is not to be used outside its transaction meanwhile.
    const state = await this.load();
    const keyId = keyOf(state);
    const row = keyId === null ? null : { table: 'signing_keys', column: 'key_id', key: keyId, queue: SIGNING_KEY_QUEUE };
    let storedApart: SealedSigningKey[] = [];
    let decision: SigningKeyDecision<R>;
    try {
      decision = await this.store.appendHolding(SIGNING_KEYS_STREAM, row, async ({ at, rowHeld, within }) => {
        if (keyId !== null && !rowHeld && state.keys.some((k) => k.key_id === keyId)) {
          throw new Error(`signing key ${keyId} is in the ring but not in signing_keys: rebuild the ${signingKeysProjection.name} projection`);
        }
        const made = decide(state, at);
        if (made.events.length > 0) {
          if (within) await this.secrets.within(within).add(made.sealed);
          else await this.secrets.add((storedApart = made.sealed));
        }
        return { events: made.events as NewEvent[], expectedRevision: expectedOf(state), result: made };
      });
    } catch (err) {
      // Stored apart from a refused append: discarded, as in save. (Within the store's transaction they went with it.)
      if (err instanceof WrongExpectedVersion) await this.secrets.discard(storedApart.map((k) => k.key_id));
      throw err;
    }
    if (decision.events.length > 0) await this.announce();
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

