/**
 * `npm run bench [-- <scenario>[:<mode>]...]`: runs the named scenarios (all of them when none is
 * named), each in each of its modes, and prints one JSON line per scenario and mode on stdout.
 * Progress and diagnostics go to stderr. Exit code: 0 when every line has errors = 0, 1 when
 * any has errors (or could not run, e.g. PostgreSQL unreachable), 2 for a usage error.
 *
 * A new scenario is one file under scenarios/ exporting a `Scenario` (see harness.ts), added to
 * SCENARIOS below.
 */
import { BenchResult, Scenario, UsageError, emit, errorMessage, isFailed, log, runInterruptCleanups } from './harness';
import { appendScenario } from './scenarios/append';
import { limiterScenario } from './scenarios/limiter';
import { verifyScenario } from './scenarios/verify';
import { registryScenario } from './scenarios/registry';
import { issueScenario } from './scenarios/issue';
import { authorizeScenario } from './scenarios/authorize';
import { webhookScenario } from './scenarios/webhook';
import { consoleScenario } from './scenarios/console';

/** Run order when no scenario is named. */
const SCENARIOS: Scenario[] = [appendScenario, issueScenario, verifyScenario, authorizeScenario, webhookScenario, registryScenario, limiterScenario, consoleScenario];

function usage(): string {
  const width = Math.max(...SCENARIOS.map((s) => s.name.length));
  return [
    'usage: npm run bench [-- <scenario>[:<mode>]...]',
    '',
    'Runs the named scenarios (all when none is named) in each of their modes, or only the given',
    'mode; prints one JSON result line per scenario and mode on stdout.',
    '',
    'scenarios:',
    ...SCENARIOS.map((s) => `  ${s.name.padEnd(width)}  ${s.description}; modes: ${s.modes.join(', ')}`),
    '',
    'environment: BENCH_N (operations/events; console: transactions), BENCH_CONCURRENCY, BENCH_BATCH (events per append;',
    '  console: streams per seeding append), BENCH_LOADS (console: loads per page), CHROMIUM_PATH (console),',
    '  BENCH_POOL (pg pool size), DATABASE_URL (postgres mode; default postgres://postgres@127.0.0.1:5432/test).',
    'See docs/benchmarks.md.',
    '',
  ].join('\n');
}

interface Selection {
  scenario: Scenario;
  modes: string[];
}

/** Parses the arguments; null when they are not valid (the caller prints usage). */
function select(args: string[]): Selection[] | null {
  if (args.length === 0) return SCENARIOS.map((scenario) => ({ scenario, modes: [...scenario.modes] }));
  const selections: Selection[] = [];
  for (const arg of args) {
    const [name, mode, ...rest] = arg.split(':');
    const scenario = SCENARIOS.find((s) => s.name === name);
    if (!scenario || rest.length > 0 || (mode !== undefined && !scenario.modes.includes(mode))) {
      process.stderr.write(`bench: unknown scenario or mode: ${arg}\n`);
      return null;
    }
    let selection = selections.find((s) => s.scenario === scenario);
    if (!selection) selections.push((selection = { scenario, modes: [] }));
    for (const m of mode === undefined ? scenario.modes : [mode]) if (!selection.modes.includes(m)) selection.modes.push(m);
  }
  // Modes run in the scenario's own order, whatever order they were named in.
  for (const s of selections) s.modes = s.scenario.modes.filter((m) => s.modes.includes(m));
  return selections;
}

async function main(args: string[]): Promise<number> {
  if (args.some((a) => a === '-h' || a === '--help')) {
    process.stdout.write(usage());
    return 0;
  }
  const selections = select(args);
  if (!selections) {
    process.stderr.write(usage());
    return 2;
  }

  let failed = false;
  for (const { scenario, modes } of selections) {
    for (const mode of modes) {
      log(`${scenario.name}/${mode}: starting`);
      let result: BenchResult;
      try {
        result = await scenario.run(mode);
      } catch (err) {
        if (err instanceof UsageError) {
          process.stderr.write(`bench: ${err.message}\n${usage()}`);
          return 2;
        }
        const error = `${scenario.name}/${mode} crashed: ${err instanceof Error && err.stack ? err.stack : errorMessage(err)}`;
        log(error);
        result = { bench: scenario.name, mode, n: 0, concurrency: 0, ops_per_s: 0, p50_ms: 0, p99_ms: 0, errors: 1, error: errorMessage(err) };
      }
      if (isFailed(result)) failed = true;
      emit(result);
    }
  }
  return failed ? 1 : 0;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: cleaning up (again to force)`);
    void runInterruptCleanups().finally(() => process.exit(130));
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Everything is closed by now; should a stray handle remain, don't hang after the results.
    setTimeout(() => {
      log('exiting with open handles');
      process.exit(code);
    }, 2000).unref();
  },
  (err) => {
    log(`fatal: ${err instanceof Error && err.stack ? err.stack : errorMessage(err)}`);
    process.exit(1);
  },
);
