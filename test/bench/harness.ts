/**
 * Shared pieces of `npm run bench`: the Scenario shape every scenario file exports, a load
 * runner (N operations at concurrency C, per-operation latency), the summary figures and the
 * JSON line of the output contract (docs/benchmarks.md, CONVENTIONS "Benchmark output").
 *
 * stdout carries only the JSON result lines; everything else goes to stderr through `log`.
 */
import { performance } from 'node:perf_hooks';

/** One line of output: the contract's fields first, then whatever a scenario adds. */
export interface BenchResult {
  bench: string;
  mode: string;
  n: number;
  concurrency: number;
  ops_per_s: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  /** Why the run failed or could not start (unreachable database, failed check...). */
  error?: string;
  [extra: string]: unknown;
}

/** The fields that identify a result line. */
export type ResultBase = Pick<BenchResult, 'bench' | 'mode' | 'n' | 'concurrency'>;

/**
 * A benchmark scenario: one file under scenarios/, registered in main.ts. `run` is called once
 * per mode, in the order of `modes`, and returns that mode's result (it must not throw for a
 * failure it can describe: return `failedResult(...)` instead, so the line is still printed).
 */
export interface Scenario {
  name: string;
  /** One line for the usage text. */
  description: string;
  modes: readonly string[];
  run(mode: string): Promise<BenchResult>;
}

export const log = (message: string): void => {
  process.stderr.write(`bench: ${message}\n`);
};

/** Prints a result as one JSON line on stdout. */
export function emit(result: BenchResult): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** A positive integer from the environment, or the default. A malformed value is a usage error. */
export function envInt(name: string, dflt: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return dflt;
  const value = Number(raw.replace(/_/g, ''));
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message || err.name : String(err));

export interface LoadOptions {
  /** Label for progress lines on stderr. */
  label: string;
  /** Number of operations to run. */
  operations: number;
  concurrency: number;
  /**
   * Called once per concurrent worker (0..concurrency-1); returns the function that performs one
   * operation. `op` is the global operation index (0..operations-1), handed out in order; a worker
   * keeps its own state (its streams, its connection...) in the closure.
   */
  worker(index: number): (op: number) => Promise<void>;
  /** Units of work an operation represents (e.g. events in an append); default 1. */
  unitsOf?(op: number): number;
  /** Progress line on stderr every this many ms; 0 = none. Default 2000. */
  progressMs?: number;
  /** How many error messages to print on stderr (the rest are only counted). Default 5. */
  maxLoggedErrors?: number;
}

export interface LoadResult {
  operations: number;
  /** Operations that threw. */
  failedOps: number;
  /** Units of the operations that succeeded / threw. */
  units: number;
  failedUnits: number;
  elapsedMs: number;
  /** Latency of every completed operation (failed ones included), in ms, sorted ascending. */
  latenciesMs: Float64Array;
  /** The first error message, if any operation threw. */
  firstError?: string;
  /** This process's CPU time (user + system, all threads) over the run, in % of one core. */
  nodeCpuPct: number;
  /** Share of the run the event loop was busy, in % (100 = the JS thread is the bottleneck). */
  eventLoopPct: number;
}

/**
 * Runs `operations` operations with `concurrency` workers pulling from one shared counter, and
 * records each operation's latency. The elapsed time covers the first start to the last finish.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { operations, concurrency, label } = options;
  const unitsOf = options.unitsOf ?? (() => 1);
  const maxLogged = options.maxLoggedErrors ?? 5;
  const latencies = new Float64Array(operations);
  let next = 0;
  let completed = 0;
  let failedOps = 0;
  let units = 0;
  let failedUnits = 0;
  let firstError: string | undefined;

  const workers = Array.from({ length: Math.min(concurrency, operations) }, (_, i) => options.worker(i));
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const start = performance.now();
  // Checked after each operation rather than on a timer: with an in-process database (PGlite)
  // the writers chain through microtasks only, so timers (and signals: Ctrl-C) wait until the
  // run is over. Workers deliberately do not yield to the event loop: a parked worker would
  // drop the time it waits for the others from its latency.
  const progressMs = options.progressMs ?? 2000;
  let lastProgress = start;
  const progress = (now: number) => {
    lastProgress = now;
    const s = (now - start) / 1000;
    log(`${label}: ${completed}/${operations} ops, ${units} units, ${(units / s).toFixed(0)} units/s, ${failedOps} failed`);
  };

  await Promise.all(
    workers.map(async (doOp) => {
      for (let op = next++; op < operations; op = next++) {
        const t0 = performance.now();
        try {
          await doOp(op);
          units += unitsOf(op);
        } catch (err) {
          failedOps++;
          failedUnits += unitsOf(op);
          const message = errorMessage(err);
          firstError ??= message;
          if (failedOps <= maxLogged && !stopping) log(`${label}: operation ${op} failed: ${message}`);
        }
        const now = performance.now();
        latencies[completed++] = now - t0;
        if (progressMs > 0 && now - lastProgress >= progressMs) progress(now);
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  if (failedOps > maxLogged) log(`${label}: ${failedOps - maxLogged} more operations failed`);
  const sorted = latencies.subarray(0, completed).sort();
  return {
    operations,
    failedOps,
    units,
    failedUnits,
    elapsedMs,
    latenciesMs: sorted,
    firstError,
    nodeCpuPct: round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100, 0),
    eventLoopPct: round(elu.utilization * 100, 0),
  };
}

/** Nearest-rank percentile of ascending values (0 when empty). */
export function percentile(sortedAsc: Float64Array, p: number): number {
  if (sortedAsc.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sortedAsc.length);
  return sortedAsc[Math.min(sortedAsc.length, Math.max(1, rank)) - 1];
}

export const round = (value: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

/** The contract fields from a load run: ops_per_s counts successful units per second. */
export function summarize(base: ResultBase, load: LoadResult): BenchResult {
  return {
    ...base,
    ops_per_s: round(load.units / (load.elapsedMs / 1000), 1),
    p50_ms: round(percentile(load.latenciesMs, 50), 2),
    p99_ms: round(percentile(load.latenciesMs, 99), 2),
    errors: load.failedUnits,
    ...(load.firstError ? { error: load.firstError } : {}),
  };
}

/** The line for a mode that could not run at all: every operation counts as an error. */
export function failedResult(base: ResultBase, error: string, extra: Record<string, unknown> = {}): BenchResult {
  return { ...base, ops_per_s: 0, p50_ms: 0, p99_ms: 0, errors: base.n, ...extra, error };
}

/** A result counts as failed (exit code 1) when anything went wrong. */
export const isFailed = (result: BenchResult): boolean => result.errors > 0 || result.error !== undefined;

const cleanups = new Set<() => Promise<void>>();
/** Set once an interrupt started the cleanups: operations failing from then on are expected. */
let stopping = false;

/**
 * Registers something to undo if the run is interrupted (Ctrl-C): a temp schema or directory.
 * Call the returned function once the scenario has cleaned up by itself.
 */
export function cleanupOnInterrupt(fn: () => Promise<void>): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/** Runs the registered cleanups (main.ts calls this on SIGINT/SIGTERM). */
export async function runInterruptCleanups(): Promise<void> {
  stopping = true;
  const pending = [...cleanups];
  cleanups.clear();
  await Promise.allSettled(pending.map((fn) => fn()));
}
