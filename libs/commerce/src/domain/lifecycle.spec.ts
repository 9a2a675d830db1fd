import { AppError } from '@app/core';
import {
  allowedEvents,
  IllegalTransition,
  isLifecycleEventType,
  isTerminal,
  LIFECYCLE,
  LIFECYCLE_EVENT_TYPES,
  LifecycleEventType,
  nextStatus,
  statusAfter,
  statusesEntered,
  TRANSACTION_STATUSES,
  TransactionStatus,
} from './lifecycle';

/** DESIGN.md's table, written out again so that a change to LIFECYCLE has to change this too. */
const ALLOWED: Array<[TransactionStatus | null, LifecycleEventType, TransactionStatus]> = [
  [null, 'authorization.requested', 'evaluating'],
  ['evaluating', 'authorization.approved', 'authorized'],
  ['evaluating', 'authorization.escalated', 'needs_review'],
  ['needs_review', 'authorization.human_approved', 'authorized'],
  ['evaluating', 'authorization.rejected', 'rejected'],
  ['needs_review', 'authorization.rejected', 'rejected'],
  ['authorized', 'execution.initiated', 'authorized'],
  ['authorized', 'execution.succeeded', 'executed'],
  ['authorized', 'execution.failed', 'authorized'],
  ['authorized', 'authorization.rejected', 'expired'],
  ['executed', 'receipt.issued', 'receipt_issued'],
];

/** The rows that apply only to an event whose data marks it final. */
const FINAL: Array<[TransactionStatus, LifecycleEventType, TransactionStatus]> = [['authorized', 'execution.failed', 'declined']];

const illegal = (from: TransactionStatus | null, event: LifecycleEventType): IllegalTransition => {
  try {
    nextStatus(from, event);
  } catch (err) {
    if (err instanceof IllegalTransition) return err;
    throw err;
  }
  throw new Error(`${from} + ${event} was allowed`);
};

describe('transaction lifecycle', () => {
  it('has the nine spec events, in lifecycle order', () => {
    expect(LIFECYCLE_EVENT_TYPES).toEqual([
      'authorization.requested',
      'authorization.approved',
      'authorization.escalated',
      'authorization.human_approved',
      'authorization.rejected',
      'execution.initiated',
      'execution.succeeded',
      'execution.failed',
      'receipt.issued',
    ]);
    expect(isLifecycleEventType('receipt.issued')).toBe(true);
    expect(isLifecycleEventType('webhook.test')).toBe(false);
  });

  it('is exactly the DESIGN.md table, plus the final decline', () => {
    expect(LIFECYCLE.filter((t) => !t.final).map((t) => [t.from, t.event, t.to])).toEqual(ALLOWED);
    expect(LIFECYCLE.filter((t) => t.final).map((t) => [t.from, t.event, t.to])).toEqual(FINAL);
  });

  it.each(ALLOWED)('allows %s + %s → %s', (from, event, to) => {
    expect(nextStatus(from, event)).toBe(to);
  });

  it('forbids every (status, event) pair the table does not list', () => {
    const listed = new Set(ALLOWED.map(([from, event]) => `${from}|${event}`));
    let forbidden = 0;
    for (const from of [null, ...TRANSACTION_STATUSES]) {
      for (const event of LIFECYCLE_EVENT_TYPES) {
        if (listed.has(`${from}|${event}`)) continue;
        const err = illegal(from, event);
        expect(err).toMatchObject({ code: 'illegal_transition', status: 409, from, event });
        forbidden++;
      }
    }
    expect(forbidden).toBe(10 * 9 - ALLOWED.length);
  });

  it.each(FINAL)('allows %s + %s → %s only when the event is final (a decline)', (from, event, to) => {
    expect(nextStatus(from, event, { final: true })).toBe(to);
    expect(nextStatus(from, event)).not.toBe(to);
  });

  it('a final event where the table has no final row is refused', () => {
    expect(() => nextStatus('evaluating', 'authorization.rejected', { final: true })).toThrow(IllegalTransition);
    expect(() => nextStatus('declined', 'execution.failed', { final: true })).toThrow(IllegalTransition);
  });

  it.each([
    ['evaluating', 'authorization.human_approved'],
    ['needs_review', 'authorization.approved'],
    ['needs_review', 'authorization.escalated'],
    ['needs_review', 'execution.initiated'],
    ['needs_review', 'execution.succeeded'],
    ['needs_review', 'execution.failed'],
    ['evaluating', 'execution.initiated'],
    ['rejected', 'authorization.human_approved'],
    ['rejected', 'authorization.rejected'],
    ['rejected', 'execution.initiated'],
    ['receipt_issued', 'receipt.issued'],
    ['receipt_issued', 'execution.succeeded'],
    ['executed', 'execution.succeeded'],
    ['executed', 'execution.failed'],
    ['executed', 'authorization.rejected'],
    ['authorized', 'authorization.approved'],
    ['authorized', 'authorization.human_approved'],
    ['declined', 'execution.initiated'],
    ['declined', 'execution.failed'],
    ['expired', 'execution.initiated'],
    ['expired', 'authorization.rejected'],
    ['authorized', 'receipt.issued'],
    ['evaluating', 'authorization.requested'],
    ['initiated', 'authorization.approved'],
    [null, 'authorization.approved'],
    [null, 'receipt.issued'],
  ] as Array<[TransactionStatus | null, LifecycleEventType]>)('forbids %s + %s', (from, event) => {
    expect(() => nextStatus(from, event)).toThrow(IllegalTransition);
  });

  it('raises an AppError (409 illegal_transition) that names the status and the event', () => {
    const err = illegal('needs_review', 'execution.initiated');
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(AppError);
    expect(err.name).toBe('IllegalTransition');
    expect(err.message).toBe('execution.initiated is not allowed when the transaction is needs_review');
    expect(err.details).toEqual({ from: 'needs_review', event: 'execution.initiated' });
    expect(illegal(null, 'receipt.issued').message).toBe('receipt.issued is not allowed before the transaction exists');
  });

  it('folds whole timelines: every path of the table', () => {
    const paths: Array<[LifecycleEventType[], TransactionStatus]> = [
      [['authorization.requested', 'authorization.approved', 'execution.initiated', 'execution.succeeded', 'receipt.issued'], 'receipt_issued'],
      [['authorization.requested', 'authorization.rejected'], 'rejected'],
      [['authorization.requested', 'authorization.escalated', 'authorization.human_approved'], 'authorized'],
      [['authorization.requested', 'authorization.escalated', 'authorization.rejected'], 'rejected'],
      [['authorization.requested', 'authorization.approved', 'execution.initiated', 'execution.failed', 'execution.initiated', 'execution.failed'], 'authorized'],
      [['authorization.requested', 'authorization.approved', 'execution.initiated', 'execution.failed', 'execution.initiated', 'execution.succeeded'], 'executed'],
    ];
    for (const [events, status] of paths) expect(statusAfter(events)).toBe(status);
    expect(statusAfter(['authorization.requested', 'authorization.approved', 'execution.initiated', { type: 'execution.failed', final: true }])).toBe('declined');
    expect(statusAfter(['authorization.requested', 'authorization.approved', 'execution.initiated', { type: 'execution.failed', final: false }])).toBe('authorized');
    expect(statusAfter(['authorization.requested', 'authorization.approved', 'authorization.rejected'])).toBe('expired');
    expect(statusAfter([])).toBeNull();
    expect(() => statusAfter(['authorization.requested', 'authorization.approved', 'execution.succeeded', 'receipt.issued', 'receipt.issued'])).toThrow(IllegalTransition);
  });

  it('says which statuses each event entered: the request enters initiated then evaluating; an event that changes nothing enters none', () => {
    expect(statusesEntered(null, 'authorization.requested', 'evaluating')).toEqual(['initiated', 'evaluating']);
    expect(statusesEntered('evaluating', 'authorization.escalated', 'needs_review')).toEqual(['needs_review']);
    expect(statusesEntered('needs_review', 'authorization.approval_recorded', 'needs_review')).toEqual([]);
    expect(statusesEntered('needs_review', 'authorization.human_approved', 'authorized')).toEqual(['authorized']);
    expect(statusesEntered('authorized', 'execution.initiated', 'authorized')).toEqual([]);
    expect(statusesEntered('authorized', 'execution.failed', 'declined')).toEqual(['declined']);
    expect(statusesEntered('authorized', 'authorization.rejected', 'expired')).toEqual(['expired']);
    // Every status of TRANSACTION_STATUSES is entered along some path of the table.
    const entered = new Set(LIFECYCLE.flatMap((t) => statusesEntered(t.from, t.event, t.to)));
    expect(TRANSACTION_STATUSES.filter((s) => !entered.has(s))).toEqual([]);
  });

  it('lists the allowed events per status; rejected, declined, expired and receipt_issued are terminal', () => {
    expect(allowedEvents(null)).toEqual(['authorization.requested']);
    expect(allowedEvents('evaluating')).toEqual(['authorization.approved', 'authorization.escalated', 'authorization.rejected']);
    expect(allowedEvents('needs_review')).toEqual(['authorization.human_approved', 'authorization.rejected']);
    expect(allowedEvents('authorized')).toEqual(['execution.initiated', 'execution.succeeded', 'execution.failed', 'authorization.rejected']);
    for (const end of ['rejected', 'declined', 'expired', 'receipt_issued'] as const) expect(allowedEvents(end)).toEqual([]);
    expect(TRANSACTION_STATUSES.filter(isTerminal)).toEqual(['receipt_issued', 'rejected', 'declined', 'expired']);
  });
});
