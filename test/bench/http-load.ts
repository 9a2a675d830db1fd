/**
 * HTTP load from a separate process (http-load-client.ts): the api under test keeps this
 * process's JS thread to itself, as it would behind a real client. Returns the same LoadResult
 * as `runLoad`, with this process's (the api's) CPU and event-loop figures over the run and the
 * load generator's own CPU beside them.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { HttpLoadOutcome, HttpLoadSpec } from './http-load-client';
import { LoadResult, round } from './harness';

export type { HttpLoadSpec } from './http-load-client';
export { clientIp } from './http-load-client';

export interface HttpLoadResult extends LoadResult {
  /** The load generator's CPU over the run, % of one core. */
  loadgenCpuPct: number;
}

export async function runHttpLoad(spec: HttpLoadSpec): Promise<HttpLoadResult> {
  const child = fork(join(__dirname, 'http-load-client.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    const { outcome, cpu, elu } = await new Promise<{ outcome: HttpLoadOutcome; cpu: NodeJS.CpuUsage; elu: number }>((resolve, reject) => {
      let cpu0 = process.cpuUsage();
      let elu0 = performance.eventLoopUtilization();
      child.on('message', (m: HttpLoadOutcome | { started: true }) => {
        if ('started' in m) {
          cpu0 = process.cpuUsage();
          elu0 = performance.eventLoopUtilization();
          return;
        }
        resolve({ outcome: m, cpu: process.cpuUsage(cpu0), elu: performance.eventLoopUtilization(elu0).utilization });
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`load generator exited with code ${code} before reporting`)));
      child.send(spec);
    });
    return {
      operations: spec.operations,
      failedOps: outcome.failedOps,
      units: outcome.latenciesMs.length - outcome.failedOps,
      failedUnits: outcome.failedOps,
      elapsedMs: outcome.elapsedMs,
      latenciesMs: Float64Array.from(outcome.latenciesMs).sort(),
      firstError: outcome.firstError,
      nodeCpuPct: round(((cpu.user + cpu.system) / 1000 / outcome.elapsedMs) * 100, 0),
      eventLoopPct: round(elu * 100, 0),
      loadgenCpuPct: outcome.cpuPct,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  }
}

/** The extra fields a scenario adds to its line from an HTTP run. */
export const httpLoadFields = (load: HttpLoadResult) => ({
  api_cpu_pct: load.nodeCpuPct,
  api_event_loop_pct: load.eventLoopPct,
  // The api's CPU per operation: steadier than throughput when other work shares the machine.
  api_cpu_us_per_op: round((load.nodeCpuPct / 100) * ((load.elapsedMs * 1000) / Math.max(1, load.latenciesMs.length)), 0),
  loadgen_cpu_pct: load.loadgenCpuPct,
  elapsed_s: round(load.elapsedMs / 1000, 2),
});
