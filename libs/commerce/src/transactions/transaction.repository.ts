import { Batcher } from '@app/core';
import type { EventStore, NewEvent, StreamAppendOutcome } from '@app/event-store';
import type { SignedRecord } from '../receipts/signed-record';
import { transactionStream } from './transaction.events';

/**
 * Writes of transaction streams through the EventStore port; the transactions projection writes
 * the read model and the spend counters with each append. New transactions saved at the same
 * moment go in one `appendMany` (group commit).
 */
export class TransactionRepository {
  private readonly newStreams = new Batcher((batch: { transactionId: string; events: NewEvent[] }[]) => this.writeNew(batch), { maxBatch: 64, maxInFlight: 4 });

  constructor(private readonly store: EventStore) {}

  /** A new transaction's first events; resolves with what was recorded. */
  async saveNew(transactionId: string, events: NewEvent[]) {
    const outcome = await this.newStreams.add({ transactionId, events });
    if (outcome.status === 'wrong_expected_version') throw outcome.error;
    return outcome.result;
  }

  /**
   * A new transaction in its own append: decisions under a spend cap, whose reservation the spend
   * table's CHECK may refuse (ReadModelConstraintViolated) without taking other decisions with it.
   */
  saveNewAlone(transactionId: string, events: NewEvent[]) {
    return this.store.append(transactionStream(transactionId), events, { expectedRevision: 'no_stream' });
  }

  /** Events a decision on an existing transaction made, at the revision it was decided on (a race loses with WrongExpectedVersion). */
  save(state: { transaction_id: string; revision: number }, events: NewEvent[]) {
    return this.store.append(transactionStream(state.transaction_id), events, { expectedRevision: state.revision });
  }

  /** The transaction's events from its start up to a revision, in order. */
  history(transactionId: string, upToRevision: number) {
    return this.store.readStream(transactionStream(transactionId), { limit: upToRevision + 1 });
  }

  /** The stream's last event (a receipt, or the success a receipt is still owed for). */
  async lastEvent(transactionId: string) {
    return (await this.store.readStream(transactionStream(transactionId), { direction: 'backwards', limit: 1 }))[0] ?? null;
  }

  /** The transaction's signed receipt, once issued. */
  async receipt(transactionId: string): Promise<SignedRecord | null> {
    const last = await this.lastEvent(transactionId);
    return last?.type === 'receipt.issued' ? (last.data as { receipt: SignedRecord }).receipt : null;
  }

  private writeNew(batch: { transactionId: string; events: NewEvent[] }[]): Promise<StreamAppendOutcome[]> {
    return this.store.appendMany(batch.map((t) => ({ stream: transactionStream(t.transactionId), events: t.events, expected: 'no_stream' as const })));
  }
}
