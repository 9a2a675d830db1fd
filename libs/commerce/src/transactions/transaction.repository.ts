import { Batcher, Clock, signedAgainOnRevocation } from '@app/core';
import { AppendResult, EventStore, NewEvent, RecordedEvent, StreamAppendOutcome, WrongExpectedVersion } from '@app/event-store';
import { revokedKeyRefusal } from '@app/notary';
import { anchorTimeline } from '../domain/timeline-anchor';
import { ANCHOR_SCHEMA, SignedRecord, Signer, signRecord } from '../receipts/signed-record';
import { transactionStream } from './transaction.events';
import { SIGNING_KEY_GUARD } from './transaction.projection';

/** How a process that holds the signing key anchors the timelines it ends (the api role; the worker holds none). */
export interface TimelineAnchoring {
  issuer: string;
  sign: Signer;
  clock: Clock;
  /** Reloads the signing keys, after an anchor signed with them was refused because its key is revoked. */
  refresh: () => Promise<void>;
  /** An anchor that could not be written now (the anchoring sweep writes it later). */
  onError?: (err: unknown, transactionId: string) => void;
}

/**
 * Writes of transaction streams through the EventStore port; the transactions projection writes
 * the read model and the spend counters with each append. New transactions saved at the same
 * moment go in one `appendMany` (group commit).
 *
 * Every save that ends a transaction (its last event terminal) is followed by the timeline's
 * anchor (`timeline.anchored`, a signed payment_timeline_anchor.v1 naming that event's hash), in
 * the next append at the terminal event's revision, before the save returns: so no path to a
 * terminal state can forget it. Without `anchoring` (the worker role, which holds no signing
 * key) the anchor is left to the anchoring sweep of a process that has one.
 *
 * The projection refuses an append carrying a record signed by a key revoked by commit time
 * (SIGNING_KEY_GUARD): every save then rejects with SigningKeyRevoked, for its caller to sign
 * again after reloading the keys; a refused group commit fails whole, each of its callers with its
 * own SigningKeyRevoked. An anchor refused so is signed again here, after `anchoring.refresh`.
 */
export class TransactionRepository {
  private readonly newStreams = new Batcher((batch: { transactionId: string; events: NewEvent[] }[]) => this.writeNew(batch), { maxBatch: 64, maxInFlight: 4 });

  private readonly anchors = new Batcher((batch: { stream: string; events: NewEvent[]; expected: number }[]) => this.writeAnchors(batch), { maxBatch: 64, maxInFlight: 2 });

  constructor(
    private readonly store: EventStore,
    private readonly anchoring: TimelineAnchoring | null = null,
  ) {}

  /** A new transaction's first events; resolves with what was recorded. */
  async saveNew(transactionId: string, events: NewEvent[]) {
    const outcome = await refusedKey(this.newStreams.add({ transactionId, events }));
    if (outcome.status === 'wrong_expected_version') throw outcome.error;
    return this.anchored(outcome.result);
  }

  /**
   * A new transaction in its own append: decisions under a spend cap, whose reservation the spend
   * table's CHECK may refuse (ReadModelConstraintViolated) without taking other decisions with it.
   */
  async saveNewAlone(transactionId: string, events: NewEvent[]) {
    return this.anchored(await refusedKey(this.store.append(transactionStream(transactionId), events, { expectedRevision: 'no_stream' })));
  }

  /** Events a decision on an existing transaction made, at the revision it was decided on (a race loses with WrongExpectedVersion). */
  async save(state: { transaction_id: string; revision: number }, events: NewEvent[]) {
    return this.anchored(await refusedKey(this.store.append(transactionStream(state.transaction_id), events, { expectedRevision: state.revision })));
  }

  /**
   * Anchors the timeline when its last event is terminal and not anchored yet: the anchoring
   * sweep's path (transactions that ended before anchors existed, or whose anchor a crash or a
   * key-less worker left unwritten). Resolves with whether it wrote one.
   */
  async anchorIfTerminal(transactionId: string): Promise<boolean> {
    const last = await this.lastEvent(transactionId);
    return last !== null && (await this.writeAnchor(last, true));
  }

  /** A save's result, once the anchor that must follow a terminal event is written (or left to the sweep). */
  private async anchored(result: AppendResult): Promise<AppendResult> {
    const last = result.events[result.events.length - 1];
    if (this.anchoring && last && !result.idempotentReplay) await this.writeAnchor(last, false);
    return result;
  }

  /**
   * Signs and writes the anchor `last` is owed. One refused because its key was revoked (this
   * process's keys were out of date) is signed again after the keys reload, up to
   * MAX_SIGNING_ATTEMPTS times; then, like any failure, it is the sweep's (or rethrown on its path).
   */
  private async writeAnchor(last: RecordedEvent, rethrow: boolean): Promise<boolean> {
    const anchoring = this.anchoring;
    if (!anchoring) return false;
    const transactionId = String((last.data as { transaction_id?: unknown }).transaction_id);
    try {
      return await signedAgainOnRevocation(anchoring.refresh, async () => {
        const events = anchorTimeline(last, { issuer: anchoring.issuer, now: anchoring.clock.now(), sign: (payload) => signRecord(ANCHOR_SCHEMA, payload, anchoring.sign) });
        if (events.length === 0) return false;
        // A wrong expected revision: anchored concurrently (the sweep, or another process).
        return (await refusedKey(this.anchors.add({ stream: last.stream_id, events, expected: last.revision }))).status === 'appended';
      });
    } catch (err) {
      if (err instanceof WrongExpectedVersion) return false;
      if (rethrow) throw err;
      // The terminal event is recorded; its anchor is the sweep's to write now.
      anchoring.onError?.(err, transactionId);
      return false;
    }
  }

  /** The transaction's events from its start up to a revision, in order. */
  history(transactionId: string, upToRevision: number) {
    return this.store.readStream(transactionStream(transactionId), { limit: upToRevision + 1 });
  }

  /** The stream's last event (a receipt, or the success a receipt is still owed for). */
  async lastEvent(transactionId: string) {
    return (await this.store.readStream(transactionStream(transactionId), { direction: 'backwards', limit: 1 }))[0] ?? null;
  }

  /** The transaction's signed receipt, once issued (the last event, or the one before its anchor). */
  async receipt(transactionId: string): Promise<SignedRecord | null> {
    const tail = await this.store.readStream(transactionStream(transactionId), { direction: 'backwards', limit: 2 });
    const issued = tail.find((e) => e.type === 'receipt.issued');
    return issued ? (issued.data as { receipt: SignedRecord }).receipt : null;
  }

  /** Anchors of one moment in one appendMany; a stream twice in a batch (a save and the sweep) is written once. */
  private async writeAnchors(batch: { stream: string; events: NewEvent[]; expected: number }[]): Promise<StreamAppendOutcome[]> {
    const first = new Map<string, number>();
    batch.forEach((a, i) => first.has(a.stream) || first.set(a.stream, i));
    const unique = batch.filter((a, i) => first.get(a.stream) === i);
    const written = await this.store.appendMany(unique);
    return batch.map((a, i) =>
      first.get(a.stream) === i ? written[unique.indexOf(a)] : { status: 'wrong_expected_version' as const, error: new WrongExpectedVersion(a.stream, a.expected, a.expected + 1) },
    );
  }

  private writeNew(batch: { transactionId: string; events: NewEvent[] }[]): Promise<StreamAppendOutcome[]> {
    return this.store.appendMany(batch.map((t) => ({ stream: transactionStream(t.transactionId), events: t.events, expected: 'no_stream' as const })));
  }
}

/** A save refused by the transactions projection's guard (a record signed by a revoked key) as SigningKeyRevoked, one per caller. */
async function refusedKey<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    throw revokedKeyRefusal(err, SIGNING_KEY_GUARD) ?? err;
  }
}
