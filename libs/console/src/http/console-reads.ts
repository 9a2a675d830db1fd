import { TransactionQueries } from '@app/commerce';
import type { PendingReview } from '../pages/approvals.page';
import type { ListFilters, ReplayView, TimelineView, TransactionListItem } from '../pages/transactions.pages';

type Item = TransactionListItem & { authorization_id: string; expires_at: string | null };

/** What the console's pages read: the API's own transaction queries, nothing of their own. */
export class ConsoleReads {
  constructor(private readonly queries: TransactionQueries) {}

  /** The queue: a page of needs_review authorizations, each with the rule that escalated it (the recorded decision replayed). */
  async pendingReviews(orgId: string, cursor?: string): Promise<{ items: PendingReview[]; next_cursor: string | null }> {
    const page = await this.queries.list(orgId, { status: 'needs_review', limit: 25, cursor });
    // One replay per review, the policy versions they share read once (not a query per row and per version).
    const replays = await this.queries.replayMany(orgId, (page.items as Item[]).map((t) => t.transaction_id));
    const items = (page.items as Item[]).map((t, i) => {
      const failed = replays[i]?.replayed.checks.filter((c: { passed: boolean }) => !c.passed).pop() as { rule: string; detail?: string } | undefined;
      return { ...t, escalated_by: failed ? `${failed.rule}${failed.detail ? `: ${failed.detail}` : ''}` : null };
    });
    return { items, next_cursor: page.next_cursor };
  }

  async transactions(orgId: string, filter: ListFilters & { cursor?: string; limit: number }): Promise<{ items: TransactionListItem[]; next_cursor: string | null }> {
    return this.queries.list(orgId, filter as Parameters<TransactionQueries['list']>[1]);
  }

  /** The served timeline (what `sigil timeline verify` checks offline), and the receipt once there is one. */
  download(orgId: string, transactionId: string, what: 'timeline' | 'receipt'): Promise<unknown> {
    return what === 'timeline' ? this.queries.events(orgId, transactionId) : this.queries.receipt(orgId, transactionId);
  }

  /** Another organization's transaction is not_found (404), from the first read. */
  async timeline(orgId: string, transactionId: string): Promise<{ timeline: TimelineView; replay: ReplayView | null; reviews: { payload: Record<string, unknown> }[] }> {
    const timeline = (await this.queries.events(orgId, transactionId)) as TimelineView;
    const [replay, record] = await Promise.all([this.queries.replay(orgId, transactionId).catch(() => null), this.queries.decisionRecord(orgId, transactionId)]);
    return { timeline, replay, reviews: record.reviews as unknown as { payload: Record<string, unknown> }[] };
  }
}
