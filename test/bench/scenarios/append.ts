/**
 * `append`: raw event store appends, concurrent writers on distinct streams.
 *
 * Each writer appends batches of events to its own streams (a new stream every
 * APPENDS_PER_STREAM appends) with an explicit expected revision: 'no_stream' first, then the
 * nextExpectedRevision the previous append returned, so every append goes through the
 * optimistic concurrency check and the hash chain. ops_per_s counts EVENTS appended per second;
 * latency is per append call. Afterwards the rows in the store are counted (and a sample of
 * streams' hash chains verified); any shortfall counts as errors.
 *
 * Modes: `embedded` (PGlite in a fresh temp directory, deleted afterwards) and `postgres`
 * (DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, in a fresh schema dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { canonicalJson } from '@app/crypto';
import { EventStore, ExpectedRevision, NewEvent, OpenedEventStore, SqlDatabase, openEventStore } from '@app/event-store';
import {
  BenchResult,
  ResultBase,
  Scenario,
  cleanupOnInterrupt,
  envInt,
  errorMessage,
  failedResult,
  log,
  round,
  runLoad,
  summarize,
} from '../harness';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
const APPENDS_PER_STREAM = 50;
/** Unmeasured appends per writer before the measured run (connections, plans, caches). */
const WARMUP_APPENDS_PER_WRITER = 5;
/** Streams whose hash chain is re-verified after the run. */
const CHAIN_SAMPLE = 16;

const DEFAULTS = {
  embedded: { n: 20_000, concurrency: 8, batch: 10 },
  postgres: { n: 100_000, concurrency: 64, batch: 10 },
} as const;
type Mode = keyof typeof DEFAULTS;

interface AppendConfig {
  mode: Mode;
  /** Measured events. */
  n: number;
  concurrency: number;
  batch: number;
  /** BENCH_POOL: pg pool size; undefined = the library default. */
  poolSize?: number;
}

function config(mode: Mode): AppendConfig {
  const d = DEFAULTS[mode];
  return {
    mode,
    n: envInt('BENCH_N', d.n),
    concurrency: envInt('BENCH_CONCURRENCY', d.concurrency),
    batch: envInt('BENCH_BATCH', d.batch),
    poolSize: process.env.BENCH_POOL ? envInt('BENCH_POOL', 1) : undefined,
  };
}

const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF'];
const BRANDS = ['visa', 'mastercard', 'amex'];
const TYPES = ['payment.authorization_requested', 'payment.authorized', 'payment.captured'];

/** A payment-authorization-like payload, about 200 bytes of canonical JSON. */
function paymentData(tag: string, seq: number, writer: number, recordedAt: number) {
  return {
    authorization_id: `auth_${tag}${seq.toString(16).padStart(10, '0')}`,
    agent_id: `agt_${tag}${writer.toString(16).padStart(4, '0')}`,
    merchant_id: `mch_${(seq % 977).toString(16).padStart(6, '0')}`,
    amount: { value: ((seq % 50_000) / 100 + 1).toFixed(2), currency: CURRENCIES[seq % CURRENCIES.length] },
    card: { brand: BRANDS[seq % BRANDS.length], last4: String(1000 + (seq % 9000)) },
    risk_score: (seq % 100) / 100,
    expires_at: new Date(recordedAt + 15 * 60_000).toISOString(),
  };
}

/** One writer: its own streams, its expected revision, events built fresh for every append. */
function appendWriter(store: EventStore, tag: string, phase: string, writer: number, eventsOf: (op: number) => number) {
  let streamNo = 0;
  let stream = '';
  let appendsInStream = 0;
  let expected: ExpectedRevision = 'no_stream';
  let seq = 0;
  const newStream = () => {
    stream = `payment-${tag}-${phase}${writer}-${streamNo++}`;
    appendsInStream = 0;
    expected = 'no_stream';
  };
  newStream();
  return async (op: number): Promise<void> => {
    if (appendsInStream >= APPENDS_PER_STREAM) newStream();
    const now = Date.now();
    const metadata = { actor: `agent:agt_${tag}${writer}`, correlation_id: randomUUID() };
    const count = eventsOf(op);
    const events: NewEvent[] = [];
    for (let i = 0; i < count; i++) {
      events.push({ type: TYPES[i % TYPES.length], data: paymentData(tag, writer * 1_000_000_000 + seq++, writer, now), metadata });
    }
    try {
      const result = await store.append(stream, events, { expectedRevision: expected });
      expected = result.nextExpectedRevision;
      appendsInStream++;
    } catch (err) {
      newStream(); // the stream's revision is unknown now; don't let one failure cascade
      throw err;
    }
  };
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparsable DATABASE_URL>';
  }
}

/** The pg pool's max, as PgDatabase configured it (undefined for PGlite). */
function poolMax(db: SqlDatabase): number | undefined {
  return (db as unknown as { pool?: { options?: { max?: number } } }).pool?.options?.max;
}

interface Verification {
  rows: number;
  /** Events missing or extra, plus events of streams whose chain does not verify. */
  errors: number;
  problems: string[];
}

/** Rows in `events` and the streams table's heads agree with what the writers appended. */
async function verify(opened: OpenedEventStore, expectedRows: number, sampleStreams: string[]): Promise<Verification> {
  const problems: string[] = [];
  const [{ rows }] = await opened.db.query<{ rows: string | number }>('SELECT count(*) AS rows FROM events');
  const [heads] = await opened.db.query<{ events: string | number }>('SELECT coalesce(sum(revision + 1), 0) AS events FROM streams');
  const found = Number(rows);
  let errors = Math.abs(found - expectedRows);
  if (found !== expectedRows) problems.push(`events table holds ${found} rows, expected ${expectedRows}`);
  if (Number(heads.events) !== found) problems.push(`stream heads account for ${heads.events} events, events table holds ${found}`);
  for (const stream of sampleStreams) {
    const verdict = await opened.store.verifyStream(stream);
    if (!verdict.valid) {
      errors += verdict.events;
      problems.push(`stream ${stream}: chain broken at revision ${verdict.broken_at_revision} (${verdict.reason})`);
    }
  }
  return { rows: found, errors, problems };
}

async function measure(cfg: AppendConfig, opened: OpenedEventStore, base: ResultBase): Promise<BenchResult> {
  const { store } = opened;
  const tag = randomBytes(3).toString('hex');
  const label = `append/${cfg.mode}`;

  // Warm-up: connections opened, statements planned, a few pages in cache. Not measured.
  const warmupOps = cfg.concurrency * WARMUP_APPENDS_PER_WRITER;
  const warm = await runLoad({
    label: `${label} warm-up`,
    operations: warmupOps,
    concurrency: cfg.concurrency,
    worker: (w) => appendWriter(store, tag, 'warm', w, () => cfg.batch),
    unitsOf: () => cfg.batch,
    progressMs: 0,
  });
  if (warm.failedOps > 0) return failedResult(base, `warm-up failed: ${warm.firstError}`);

  const operations = Math.ceil(cfg.n / cfg.batch);
  const eventsOf = (op: number) => (op === operations - 1 ? cfg.n - (operations - 1) * cfg.batch : cfg.batch);
  log(`${label}: ${cfg.n} events in ${operations} appends of ${cfg.batch}, ${cfg.concurrency} writers, pool ${poolMax(opened.db) ?? 'n/a'}`);
  const load = await runLoad({
    label,
    operations,
    concurrency: cfg.concurrency,
    worker: (w) => appendWriter(store, tag, 'w', w, eventsOf),
    unitsOf: eventsOf,
  });

  // Each writer's first stream (full, unless n is tiny) and a warm-up stream.
  const sample = Array.from({ length: Math.min(cfg.concurrency, CHAIN_SAMPLE - 1) }, (_, w) => `payment-${tag}-w${w}-0`);
  sample.push(`payment-${tag}-warm0-0`);
  const check = await verify(opened, warm.units + load.units, sample);
  check.problems.forEach((p) => log(`${label}: check failed: ${p}`));

  const result = summarize(base, load);
  const seconds = load.elapsedMs / 1000;
  const sampleData = canonicalJson(paymentData(tag, 12345, 0, Date.now()));
  return {
    ...result,
    errors: result.errors + check.errors,
    events_per_append: cfg.batch,
    appends_per_s: round((load.operations - load.failedOps) / seconds, 1),
    ...(cfg.mode === 'postgres' ? { pool_size: poolMax(opened.db) } : {}),
    warmup_events: warm.units,
    rows_checked: check.rows,
    event_bytes: sampleData.length,
    node_cpu_pct: load.nodeCpuPct,
    event_loop_pct: load.eventLoopPct,
    elapsed_s: round(seconds, 2),
    ...(check.problems.length > 0 ? { error: [result.error, ...check.problems].filter(Boolean).join('; ') } : {}),
  };
}

async function runEmbedded(cfg: AppendConfig): Promise<BenchResult> {
  const base: ResultBase = { bench: 'append', mode: cfg.mode, n: cfg.n, concurrency: cfg.concurrency };
  const dir = mkdtempSync(join(tmpdir(), 'sigil-bench-'));
  const removeDir = async () => rmSync(dir, { recursive: true, force: true });
  const forget = cleanupOnInterrupt(removeDir);
  let opened: OpenedEventStore | undefined;
  try {
    opened = await openEventStore({ dataDir: dir });
    return await measure(cfg, opened, base);
  } catch (err) {
    return failedResult(base, `embedded run failed: ${errorMessage(err)}`);
  } finally {
    await opened?.store.close().catch(() => undefined);
    await opened?.db.close().catch(() => undefined);
    await removeDir();
    forget();
  }
}

async function runPostgres(cfg: AppendConfig): Promise<BenchResult> {
  const base: ResultBase = { bench: 'append', mode: cfg.mode, n: cfg.n, concurrency: cfg.concurrency };
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;

  const probe = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await probe.connect();
    await probe.query('SELECT 1');
  } catch (err) {
    return failedResult(base, `PostgreSQL unreachable at ${redactUrl(url)}: ${errorMessage(err)}`);
  } finally {
    await probe.end().catch(() => undefined);
  }

  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const dropSchema = async () => {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } catch (err) {
      log(`append/postgres: could not drop schema ${schema}: ${errorMessage(err)}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const forget = cleanupOnInterrupt(dropSchema);
  let opened: OpenedEventStore | undefined;
  try {
    opened = await openEventStore({ databaseUrl: url, schema, poolSize: cfg.poolSize });
    log(`append/postgres: schema ${schema} on ${redactUrl(url)}`);
    return await measure(cfg, opened, base);
  } catch (err) {
    return failedResult(base, `postgres run failed: ${errorMessage(err)}`);
  } finally {
    await opened?.store.close().catch(() => undefined);
    await opened?.db.close().catch(() => undefined);
    await dropSchema();
    forget();
  }
}

export const appendScenario: Scenario = {
  name: 'append',
  description: 'raw event store appends/s, concurrent writers on distinct streams (embedded, postgres)',
  modes: ['embedded', 'postgres'],
  async run(mode: string): Promise<BenchResult> {
    if (mode !== 'embedded' && mode !== 'postgres') throw new Error(`append: unknown mode ${mode}`);
    const cfg = config(mode);
    return mode === 'embedded' ? runEmbedded(cfg) : runPostgres(cfg);
  },
};
