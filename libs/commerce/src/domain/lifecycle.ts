import { AppError } from '@app/core';

export type TransactionStatus = 'initiated' | 'evaluating' | 'needs_review' | 'authorized' | 'executed' | 'receipt_issued' | 'rejected' | 'declined' | 'expired';

export const TRANSACTION_STATUSES: readonly TransactionStatus[] = [
  'initiated',
  'evaluating',
  'needs_review',
  'authorized',
  'executed',
  'receipt_issued',
  'rejected',
  'declined',
  'expired',
];

/** The spec's nine lifecycle events, in lifecycle order; each is also the event `type` in the store. */
export const LIFECYCLE_EVENT_TYPES = [
  'authorization.requested',
  'authorization.approved',
  'authorization.escalated',
  'authorization.human_approved',
  'authorization.rejected',
  'execution.initiated',
  'execution.succeeded',
  'execution.failed',
  'receipt.issued',
] as const;

export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

export const isLifecycleEventType = (v: unknown): v is LifecycleEventType =>
  typeof v === 'string' && (LIFECYCLE_EVENT_TYPES as readonly string[]).includes(v);

export interface Transition {
  /** null: the transaction does not exist yet. */
  from: TransactionStatus | null;
  event: LifecycleEventType;
  to: TransactionStatus;
  /** Only for the outcome the event's data marks as final (`final: true`: a provider's decline). */
  final?: true;
  /** Statuses the event passes through on its way to `to` (authorization.requested: `initiated`). */
  via?: readonly TransactionStatus[];
}

/**
 * DESIGN.md's lifecycle table, as data. Notes:
 * - authorization.requested creates the transaction: it is `initiated` (the request received)
 *   and at once `evaluating` (the policy and spend-cap check of that request), so the status the
 *   event records is `evaluating`, reached `via` `initiated`. Neither rests: the decision is
 *   appended with the request. The timeline shows both (`entered` of each entry, statusesEntered).
 * - execution.initiated and execution.failed keep `authorized` (settling; retry allowed while
 *   the window lasts); a final execution.failed (the provider declined) ends in `declined`.
 * - An authorized transaction whose window closed unexecuted is rejected by the expiry sweep
 *   (reason EXPIRED) into `expired`, releasing its reservations.
 * - `rejected`, `declined`, `expired` and `receipt_issued` are terminal (beyond the interface's
 *   seven states, which name no end for a declined or lapsed payment).
 */
export const LIFECYCLE: readonly Transition[] = Object.freeze([
  { from: null, event: 'authorization.requested', via: ['initiated'], to: 'evaluating' },
  { from: 'evaluating', event: 'authorization.approved', to: 'authorized' },
  { from: 'evaluating', event: 'authorization.escalated', to: 'needs_review' },
  { from: 'needs_review', event: 'authorization.human_approved', to: 'authorized' },
  { from: 'evaluating', event: 'authorization.rejected', to: 'rejected' },
  { from: 'needs_review', event: 'authorization.rejected', to: 'rejected' },
  { from: 'authorized', event: 'execution.initiated', to: 'authorized' },
  { from: 'authorized', event: 'execution.succeeded', to: 'executed' },
  { from: 'authorized', event: 'execution.failed', to: 'authorized' },
  { from: 'authorized', event: 'execution.failed', final: true, to: 'declined' },
  { from: 'authorized', event: 'authorization.rejected', to: 'expired' },
  { from: 'executed', event: 'receipt.issued', to: 'receipt_issued' },
] satisfies Transition[]);

/** An event the lifecycle table does not allow in the current status (HTTP 409 where it surfaces). */
export class IllegalTransition extends AppError {
  constructor(
    readonly from: TransactionStatus | null,
    readonly event: string,
  ) {
    super('illegal_transition', `${event} is not allowed ${from === null ? 'before the transaction exists' : `when the transaction is ${from}`}`, 409, {
      from,
      event,
    });
    this.name = 'IllegalTransition';
  }
}

/** The status after `event` (`final`: the event's data marks it final); throws IllegalTransition when the table has no such row. */
export function nextStatus(current: TransactionStatus | null, event: LifecycleEventType, options: { final?: boolean } = {}): TransactionStatus {
  const final = options.final === true;
  const row = LIFECYCLE.find((t) => t.from === current && t.event === event && (t.final === true) === final);
  if (!row) throw new IllegalTransition(current, event);
  return row.to;
}

/**
 * The statuses a recorded event moved the transaction into, in order, from the status before it
 * to the `status` it records: authorization.requested enters `initiated` then `evaluating`; an
 * event that changes nothing (a retry's execution.initiated, a first approval of two) enters none.
 */
export function statusesEntered(previous: TransactionStatus | null, eventType: string, status: TransactionStatus): TransactionStatus[] {
  const row = LIFECYCLE.find((t) => t.from === previous && t.event === eventType && t.to === status);
  const via = row?.via ?? [];
  return via.length > 0 || status !== previous ? [...via, status] : [];
}

/** The events allowed in a status. */
export const allowedEvents = (current: TransactionStatus | null): LifecycleEventType[] => [
  ...new Set(LIFECYCLE.filter((t) => t.from === current).map((t) => t.event)),
];

/** Nothing follows these. */
export const TERMINAL_STATUSES: readonly TransactionStatus[] = ['rejected', 'declined', 'expired', 'receipt_issued'];

export const isTerminal = (status: TransactionStatus): boolean => TERMINAL_STATUSES.includes(status);

/** Folds a stream's events (type, and whether its data marks it final) into its status; throws IllegalTransition on the first bad step. */
export function statusAfter(events: readonly (LifecycleEventType | { type: LifecycleEventType; final?: boolean })[]): TransactionStatus | null {
  return events.reduce<TransactionStatus | null>((status, e) => (typeof e === 'string' ? nextStatus(status, e) : nextStatus(status, e.type, { final: e.final })), null);
}
