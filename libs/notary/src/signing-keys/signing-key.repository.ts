import type { EventStore, NewEvent, SqlDatabase, StreamAppend } from '@app/event-store';
import { ReadModelConstraintViolated, WrongExpectedVersion } from '@app/event-store';
import {
  foldSigningKeys,
  SealedSigningKey,
  SigningKeyDecision,
  SigningKeyEvent,
  SigningKeyRingState,
  SIGNING_KEYS_STREAM,
} from '../domain/signing-key-ring.aggregate';
import { REVOCATION_RECORDED_IN_TIME, signingKeysProjection } from './signing-key.projection';

/** A revocation's append held the key's row only after its `revoked_at` (REVOCATION_SETTLE_MS): nothing was written; decide it again. */
export class RevocationRecordedLate extends Error {
  readonly code = 'revocation_recorded_late';
  constructor() {
    super('the revocation was not recorded before the time it was to take effect; decide it again');
    this.name = 'RevocationRecordedLate';
  }
}

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
  constructor(private readonly db: SqlDatabase) {
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
      const late = err instanceof ReadModelConstraintViolated && err.constraint === REVOCATION_RECORDED_IN_TIME;
      if (err instanceof WrongExpectedVersion || late) await this.secrets.discard(decision.sealed.map((s) => s.key_id));
      throw late ? new RevocationRecordedLate() : err;
    }
    await this.announce();
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

