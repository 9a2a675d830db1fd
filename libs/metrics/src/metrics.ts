import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ChildCache, sharedProbe } from './child-cache';

/** Pending webhook deliveries and disabled endpoints, as the store has them now. */
export interface WebhookBacklog {
  /** Pending deliveries due now (waiting for a worker). */
  due: number;
  /** Pending deliveries waiting for a later retry. */
  scheduled: number;
  /** Seconds since the oldest pending delivery's event was recorded (0 when none is pending). */
  oldestPendingSeconds: number;
  /** Endpoints disabled (410 Gone, or failing too long) and not deleted. */
  disabledEndpoints: number;
}

/** How far a checkpointed projection is behind the head of `$all`, in positions. */
export interface ProjectionLag {
  name: string;
  behind: number;
}

/** The database connection pool (`pg.Pool`): null for the embedded database, which has none. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const DELIVERY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000];

/** Label of a request that matched no route (so unknown paths never become label values). */
export const UNMATCHED_ROUTE = 'unmatched';

type Observer = { observe(value: number): void };
type Incrementer = { inc(): void };

/**
 * Every metric Sigil exports, in one registry per application (the api and the worker each
 * have theirs; tests start many apps in one process). Recording is synchronous and allocates
 * nothing once a label combination has been seen; what needs the database (queue depth,
 * projection lag, pool) is read only when scraped, through the probes the owning modules set.
 */
export class Metrics {
  readonly registry = new Registry();

  private readonly httpDuration: ChildCache<string | number, Observer>;
  private readonly decisions: ChildCache<string, Incrementer>;
  private readonly decisionDuration: ChildCache<string, Observer>;
  private readonly deliveries: ChildCache<string | number, Incrementer>;
  private readonly deliveryLatency: Histogram;
  private readonly appendDuration: ChildCache<string, Observer>;
  private readonly rateLimited: ChildCache<string, Incrementer>;
  private readonly reviews: ChildCache<string, Incrementer>;
  private readonly expiries: Counter;
  private readonly replays: ChildCache<string, Incrementer>;
  private readonly conflicts: ChildCache<string, Incrementer>;

  private backlog: (() => Promise<WebhookBacklog>) | null = null;
  private readonly lags: (() => Promise<ProjectionLag[]>)[] = [];
  private pool: (() => PoolStats | null) | null = null;
  /** The pool as it was when the scrape began, before the scrape's own queries wait for it. */
  private poolAtScrape: PoolStats | null = null;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });

    const http = new Histogram({ name: 'sigil_http_request_duration_seconds', help: 'HTTP requests by route template, method and status: latency (its _count counts requests)', labelNames: ['route', 'method', 'status'], buckets: LATENCY_BUCKETS, registers });
    this.httpDuration = new ChildCache(3, ([route, method, status]) => http.labels(String(route), String(method), String(status)));

    const decisions = new Counter({ name: 'sigil_authorization_decisions_total', help: 'Authorization decisions made by POST /api/cdp/authorize, by decision and reason code', labelNames: ['decision', 'reason_code'], registers });
    this.decisions = new ChildCache(2, ([decision, reason]) => decisions.labels(decision, reason));
    const reviews = new Counter({ name: 'sigil_authorization_reviews_total', help: 'Human reviews of escalated authorizations (API or console), by outcome: approved, approval_recorded (the first of two approvals), rejected', labelNames: ['outcome'], registers });
    this.reviews = new ChildCache(1, ([outcome]) => reviews.labels(outcome));
    this.expiries = new Counter({ name: 'sigil_authorization_expiries_total', help: 'Authorizations whose window closed before a review or an execution, expired by the sweep', registers });
    const decisionDuration = new Histogram({ name: 'sigil_authorization_decision_duration_seconds', help: 'Time to decide and record an authorization, by decision', labelNames: ['decision'], buckets: LATENCY_BUCKETS, registers });
    this.decisionDuration = new ChildCache(1, ([decision]) => decisionDuration.labels(decision));

    const deliveries = new Counter({ name: 'sigil_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (delivered, retry, failed, abandoned) and attempt number in their series', labelNames: ['outcome', 'attempt'], registers });
    this.deliveries = new ChildCache(2, ([outcome, attempt]) => deliveries.labels(String(outcome), String(attempt)));
    this.deliveryLatency = new Histogram({ name: 'sigil_webhook_delivery_latency_seconds', help: 'From the event being recorded to the receiver answering 2xx', buckets: DELIVERY_BUCKETS, registers });

    const append = new Histogram({ name: 'sigil_event_store_append_duration_seconds', help: 'Event-store appends: time until recorded, by method (append, append_many)', labelNames: ['method'], buckets: APPEND_BUCKETS, registers });
    this.appendDuration = new ChildCache(1, ([method]) => append.labels(method));

    const rateLimited = new Counter({ name: 'sigil_rate_limit_rejections_total', help: 'Requests refused with 429, by lane and surface (the first bucket that refused it: a refused request is counted by no later bucket)', labelNames: ['lane', 'surface'], registers });
    this.rateLimited = new ChildCache(2, ([lane, surface]) => rateLimited.labels(lane, surface));
    const replays = new Counter({ name: 'sigil_idempotency_replays_total', help: 'Requests answered with the stored response of an earlier one with the same Idempotency-Key, by route', labelNames: ['route'], registers });
    this.replays = new ChildCache(1, ([route]) => replays.labels(route));
    const conflicts = new Counter({ name: 'sigil_idempotency_conflicts_total', help: 'Idempotency-Key conflicts by route and reason (key_reused: 422; in_progress: 409)', labelNames: ['route', 'reason'], registers });
    this.conflicts = new ChildCache(2, ([route, reason]) => conflicts.labels(route, reason));

    this.scrapedGauges(registers);
  }

  /** One HTTP request: its route template (or UNMATCHED_ROUTE), method, status and duration. */
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.httpDuration.get(route, method, status).observe(seconds);
  }

  authorizationDecided(decision: string, reasonCode: string | null, seconds: number): void {
    this.decisions.get(decision, reasonCode ?? 'none').inc();
    this.decisionDuration.get(decision).observe(seconds);
  }

  /** A person's review of an escalated authorization, by what it did to the transaction. */
  authorizationReviewed(outcome: 'approved' | 'approval_recorded' | 'rejected'): void {
    this.reviews.get(outcome).inc();
  }

  /** Authorizations the expiry sweep closed. */
  authorizationsExpired(count: number): void {
    if (count > 0) this.expiries.inc(count);
  }

  /** One delivery attempt's outcome; `eventAgeSeconds` (event recorded → 2xx) when delivered. */
  webhookDelivery(outcome: 'delivered' | 'retry' | 'failed' | 'abandoned', attempt: number, eventAgeSeconds?: number): void {
    this.deliveries.get(outcome, attempt).inc();
    if (eventAgeSeconds !== undefined) this.deliveryLatency.observe(Math.max(0, eventAgeSeconds));
  }

  eventStoreAppend(method: 'append' | 'append_many', seconds: number): void {
    this.appendDuration.get(method).observe(seconds);
  }

  rateLimitRejected(lane: string, surface: string): void {
    this.rateLimited.get(lane, surface).inc();
  }

  idempotencyReplayed(route: string): void {
    this.replays.get(route).inc();
  }

  idempotencyConflict(route: string, reason: 'key_reused' | 'in_progress'): void {
    this.conflicts.get(route, reason).inc();
  }

  /** The webhooks module's reading of its backlog (scraped). */
  setWebhookBacklogProbe(probe: () => Promise<WebhookBacklog>): void {
    this.backlog = sharedProbe(probe);
  }

  /** A source of checkpointed projections' lag (scraped); several may be added. */
  addProjectionLagProbe(probe: () => Promise<ProjectionLag[]>): void {
    this.lags.push(probe);
  }

  setPoolProbe(probe: () => PoolStats | null): void {
    this.pool = probe;
  }

  /** The registry in Prometheus text format. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    this.poolAtScrape = this.pool?.() ?? null;
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private scrapedGauges(registers: Registry[]): void {
    // A probe that fails (database down) leaves its gauges without a sample for that scrape; the scrape still answers.
    const backlog = async () => (this.backlog ? this.backlog().catch(() => null) : null);
    const lags = () => Promise.all(this.lags.map((probe) => probe().catch(() => [] as ProjectionLag[])));
    const poolStats = () => this.poolAtScrape;
    new Gauge({
      name: 'sigil_webhook_queue_depth',
      help: 'Pending webhook deliveries: state="due" waits for a worker now, state="scheduled" for a later retry',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        const b = await backlog();
        if (b) {
          this.labels('due').set(b.due);
          this.labels('scheduled').set(b.scheduled);
        }
      },
    });
    new Gauge({
      name: 'sigil_webhook_oldest_pending_age_seconds',
      help: 'Age of the oldest pending delivery, from its event being recorded',
      registers,
      async collect() {
        this.reset();
        const b = await backlog();
        if (b) this.set(b.oldestPendingSeconds);
        else this.remove();
      },
    });
    new Gauge({
      name: 'sigil_webhook_endpoints_disabled',
      help: 'Webhook endpoints disabled (410 Gone, or failing for WEBHOOK_DISABLE_AFTER_DAYS) and not deleted',
      registers,
      async collect() {
        this.reset();
        const b = await backlog();
        if (b) this.set(b.disabledEndpoints);
        else this.remove();
      },
    });
    new Gauge({
      name: 'sigil_projection_lag_events',
      help: 'Positions of $all a checkpointed projection (or the webhook fan-out) has still to read',
      labelNames: ['projection'],
      registers,
      async collect() {
        this.reset();
        for (const lag of (await lags()).flat()) this.labels(lag.name).set(lag.behind);
      },
    });
    const pool = (field: keyof PoolStats, name: string, help: string) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.reset();
          const stats = poolStats();
          if (stats) this.set(stats[field]);
          else this.remove(); // the embedded database has no pool
        },
      });
    pool('waiting', 'sigil_db_pool_waiting', 'Queries waiting for a free PostgreSQL connection (pg Pool waitingCount)');
    pool('total', 'sigil_db_pool_connections', 'PostgreSQL connections open in the pool');
    pool('idle', 'sigil_db_pool_idle', 'PostgreSQL connections idle in the pool');
  }
}
