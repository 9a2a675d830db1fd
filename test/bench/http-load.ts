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
import { processCpuSeconds } from './api-processes';
import { LoadResult, round } from './harness';
import { ProcessCpu, serviceProcesses } from './proc-cpu';

export type { HttpLoadSpec } from './http-load-client';
export { clientIp } from './http-load-client';

export interface HttpLoadResult extends LoadResult {
  /** The load generator's CPU over the run, % of one core. */
  loadgenCpuPct: number;
  /** How many api processes served the run (this one and `otherApis`). */
  apiProcesses: number;
  /** CPU of every api process over the run (this one's included), % of one core. */
  allApisCpuPct: number;
  /** CPU of the machine's PostgreSQL and Redis processes over the run, µs (null elsewhere than Linux). */
  postgresCpuUs: number | null;
  redisCpuUs: number | null;
  /** The whole machine's busy share over the run, % of all cores. */
  machineBusyPct: number | null;
  /** The share of this process's CPU spent in the kernel (socket writes and reads, mostly), %. */
  kernelPct: number;
}

/** `otherApis`: pids of more api processes serving `spec.urls`, whose CPU is added to the line. */
export async function runHttpLoad(spec: HttpLoadSpec, otherApis: number[] = []): Promise<HttpLoadResult> {
  const child = fork(join(__dirname, 'http-load-client.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let others = 0;
  // Every PostgreSQL and Redis process of the machine: the decision's whole cost, not only the api's.
  const services = new ProcessCpu(async () => serviceProcesses());
  let servicesStarted: Promise<void> | null = null;
  try {
    const { outcome, cpu, elu } = await new Promise<{ outcome: HttpLoadOutcome; cpu: NodeJS.CpuUsage; elu: number }>((resolve, reject) => {
      let cpu0 = process.cpuUsage();
      let elu0 = performance.eventLoopUtilization();
      let others0 = otherApis.map(processCpuSeconds);
      child.on('message', (m: HttpLoadOutcome | { started: true }) => {
        if ('started' in m) {
          cpu0 = process.cpuUsage();
          elu0 = performance.eventLoopUtilization();
          others0 = otherApis.map(processCpuSeconds);
          servicesStarted = services.start();
          return;
        }
        others = otherApis.reduce((sum, pid, i) => sum + processCpuSeconds(pid) - others0[i], 0);
        resolve({ outcome: m, cpu: process.cpuUsage(cpu0), elu: performance.eventLoopUtilization(elu0).utilization });
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`load generator exited with code ${code} before reporting`)));
      child.send(spec);
    });
    await servicesStarted;
    const used = await services.stop();
    const measured = Object.keys(used.groupsUs).length > 0;
    return {
      operations: spec.operations,
      failedOps: outcome.failedOps,
      units: outcome.latenciesMs.length - outcome.failedOps,
      failedUnits: outcome.failedOps,
      elapsedMs: outcome.elapsedMs,
      latenciesMs: Float64Array.from(outcome.latenciesMs).sort(),
      firstError: outcome.firstError,
      nodeCpuPct: round(((cpu.user + cpu.system) / 1000 / outcome.elapsedMs) * 100, 0),
      apiProcesses: 1 + otherApis.length,
      allApisCpuPct: round((((cpu.user + cpu.system) / 1000 + others * 1000) / outcome.elapsedMs) * 100, 0),
      eventLoopPct: round(elu * 100, 0),
      loadgenCpuPct: outcome.cpuPct,
      postgresCpuUs: measured ? (used.groupsUs.postgres ?? 0) : null,
      redisCpuUs: measured ? (used.groupsUs.redis ?? 0) : null,
      machineBusyPct: used.machineBusyPct,
      kernelPct: round((cpu.system / Math.max(1, cpu.user + cpu.system)) * 100, 0),
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  }
}

/** The extra fields a scenario adds to its line from an HTTP run. */
export const httpLoadFields = (load: HttpLoadResult) => ({
  api_processes: load.apiProcesses,
  // The bench process's api (with more processes: that one alone; all of them in api_cpu_us_per_op).
  api_cpu_pct: load.nodeCpuPct,
  api_event_loop_pct: load.eventLoopPct,
  // Of the api's CPU, the kernel's share: on this VM each socket write that wakes another process is dear.
  api_kernel_pct: load.kernelPct,
  // The api's CPU per operation, all api processes together: steadier than throughput when other
  // work shares the machine.
  api_cpu_us_per_op: round((load.allApisCpuPct / 100) * ((load.elapsedMs * 1000) / Math.max(1, load.latenciesMs.length)), 0),
  loadgen_cpu_pct: load.loadgenCpuPct,
  // PostgreSQL's and Redis's CPU per operation (every process of each server, others' use included)
  // and the machine's busy share: what an operation costs the whole 2-core budget.
  postgres_cpu_us_per_op: load.postgresCpuUs === null ? null : round(load.postgresCpuUs / Math.max(1, load.latenciesMs.length), 0),
  redis_cpu_us_per_op: load.redisCpuUs === null ? null : round(load.redisCpuUs / Math.max(1, load.latenciesMs.length), 0),
  machine_busy_pct: load.machineBusyPct,
  elapsed_s: round(load.elapsedMs / 1000, 2),
});
