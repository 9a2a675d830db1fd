/**
 * CPU time of named groups of processes, read from /proc (Linux), for scenarios whose work is
 * spread over several processes (the bench, worker processes, PostgreSQL backends, Redis).
 * Sampled now and then because pooled backends come and go: a process first seen after
 * `start()` was created during the run and counts from zero. Elsewhere than Linux it reports
 * nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 10_000; // USER_HZ is 100 on Linux

function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return null;
  }
}

/** Busy and total ticks of the whole machine (all CPUs). */
function machineTicks(): { busy: number; total: number } | null {
  try {
    const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
    const v = cpu.split(/\s+/).slice(1).map(Number);
    const idle = v[3] + (v[4] ?? 0);
    const total = v.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

export class ProcessCpu {
  private readonly procs = new Map<number, { group: string; from: number; last: number }>();
  private machine0: ReturnType<typeof machineTicks> = null;
  private timer: NodeJS.Timeout | null = null;
  private started = false;

  /** `list` names the processes to count, by group; it is called at every sample. */
  constructor(private readonly list: () => Promise<{ pid: number; group: string }[]>) {}

  async start(intervalMs = 500): Promise<void> {
    await this.sample();
    this.started = true;
    this.machine0 = machineTicks();
    this.timer = setInterval(() => void this.sample().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<{ groupsUs: Record<string, number>; machineBusyPct: number | null }> {
    if (this.timer) clearInterval(this.timer);
    await this.sample().catch(() => undefined);
    const groupsUs: Record<string, number> = {};
    for (const p of this.procs.values()) groupsUs[p.group] = (groupsUs[p.group] ?? 0) + (p.last - p.from) * TICK_US;
    const m = machineTicks();
    const machineBusyPct = m && this.machine0 ? Math.round((100 * (m.busy - this.machine0.busy)) / Math.max(1, m.total - this.machine0.total)) : null;
    return { groupsUs, machineBusyPct };
  }

  private async sample(): Promise<void> {
    for (const { pid, group } of await this.list()) {
      const ticks = cpuTicks(pid);
      if (ticks === null) continue;
      const known = this.procs.get(pid);
      if (known) known.last = ticks;
      else this.procs.set(pid, { group, from: this.started ? 0 : ticks, last: ticks });
    }
  }
}

/** The machine's PostgreSQL and Redis server processes (by command name), for a ProcessCpu list. */
export function serviceProcesses(): { pid: number; group: string }[] {
  const out: { pid: number; group: string }[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm === 'postgres') out.push({ pid: Number(entry), group: 'postgres' });
    else if (comm === 'redis-server') out.push({ pid: Number(entry), group: 'redis' });
  }
  return out;
}
