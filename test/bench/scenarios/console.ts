/**
 * `console`: first paint of the console's pages in a real Chromium with 10,000 transactions in
 * the organization (issue 13: "first meaningful paint of any page under 300 ms on this machine").
 *
 * Seeding: BENCH_N transactions (default 10,000) appended through the event store the api itself
 * opened, as commerce-events.ts shapes them (approved, rejected, and full lifecycles through
 * execution to a receipt), in appendMany batches: the read models are the real inline
 * projections' output, as if the API had written them. A few more go through POST
 * /api/cdp/authorize (the review threshold escalates them) so the approvals queue has pending
 * reviews and the timeline page shows a transaction the API made (its chain and anchor real).
 *
 * Then one console user (an admin) signs in by a one-time link in Chromium (/usr/bin/chromium or
 * CHROMIUM_PATH, through playwright-core, as the browser specs do), and each page is loaded
 * BENCH_LOADS times (default 20) after one warm-up load that is not counted (so the assets are
 * in the browser's cache, as for a person clicking through). Per load: the first-contentful-paint
 * entry of the Paint Timing API (`performance.getEntriesByType('paint')`, from the navigation's
 * start), and from Navigation Timing the server time for the HTML (requestStart → responseEnd)
 * and the time to the first byte (startTime → responseStart). Every page is server-rendered, so
 * its first contentful paint is its meaningful content.
 *
 * Output (one JSON line per mode): the contract fields with n = loads measured, concurrency 1,
 * ops_per_s = loads/s, p50_ms/p99_ms = first contentful paint over every load of every page;
 * then `transactions`, `target_ms` (300), `worst_page_fcp_p99_ms`, and `pages`: per page
 * {path, fcp_p50_ms, fcp_p99_ms, server_p50_ms, server_p99_ms, ttfb_p50_ms, html_bytes}.
 * A load that is not 200 or has no paint entry is an error.
 *
 * Modes: embedded (PGlite in a temporary DATA_DIR, what `npm start` runs) and postgres (a fresh
 * schema, dropped afterwards).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Browser } from 'playwright-core';
import { AccessService, SCOPES } from '@app/access';
import { AppConfig, loadConfig } from '@app/core';
import { EventStore, StreamAppend } from '@app/event-store';
import { createLogger } from '@app/http';
import { createApp } from '../../../apps/api/src/create-app';
import { DEFAULT_DATABASE_URL } from '../api';
import { withBenchSchema } from '../bench-schema';
import { commerceLifecycle } from '../commerce-events';
import { BenchResult, cleanupOnInterrupt, envInt, errorMessage, failedResult, log, percentile, round, Scenario } from '../harness';

const TARGET_MS = 300;
// The key the test suites seal their signing keys under in the shared `test` database.
const TEST_KEY_ENCRYPTION_KEY = createHash('sha256').update('sigil test key-encryption key').digest('base64');

interface PageSample {
  fcp: number;
  server: number;
  ttfb: number;
  bytes: number;
}

const sorted = (values: number[]) => Float64Array.from(values).sort();

async function startApi(mode: string, env: Record<string, string>): Promise<{ app: NestFastifyApplication; url: string; config: AppConfig }> {
  const config = loadConfig({ LOG_LEVEL: 'silent', WORKERS: 'off', RATE_LIMITS: 'off', ...env });
  if (mode === 'postgres' && config.storeMode !== 'postgres') throw new Error('postgres mode needs DATABASE_URL');
  const app = await createApp(config, { logger: createLogger('silent') });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (err) {
    await app.close();
    throw err;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}`, config };
}

/** BENCH_N transactions through the event store (real projections), in batches of BENCH_BATCH streams. */
async function seed(store: EventStore, orgId: string, n: number): Promise<void> {
  const batch = envInt('BENCH_BATCH', 100);
  const paths = ['approved', 'approved', 'rejected', 'full'] as const;
  const started = performance.now();
  let last = started;
  for (let done = 0; done < n; ) {
    const appends: StreamAppend[] = [];
    for (let i = 0; i < batch && done + i < n; i++) {
      const k = done + i;
      const l = commerceLifecycle(orgId, paths[k % paths.length], `api_key:key_bench`);
      // 20 agents (the request's delegated_authority, what the list's `agent` filter matches).
      (l.events[0].data as { request: Record<string, unknown> }).request.delegated_authority = `agent-${k % 20}`;
      appends.push({ stream: l.stream, events: l.events, expected: 'no_stream' });
    }
    const outcomes = await store.appendMany(appends);
    const refused = outcomes.find((o) => o.status === 'wrong_expected_version');
    if (refused) throw new Error(`seeding: an append was refused (${refused.status})`);
    done += appends.length;
    if (performance.now() - last > 5000) {
      last = performance.now();
      log(`console: seeded ${done}/${n} transactions`);
    }
  }
  log(`console: seeded ${n} transactions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function measure(app: NestFastifyApplication, url: string, mode: string, n: number): Promise<BenchResult> {
  const loads = envInt('BENCH_LOADS', 20);
  const access = app.get(AccessService);
  const org = await access.createOrganization(`bench-console-${randomBytes(3).toString('hex')}`);
  // Every scope: a key gives a person only the roles whose scopes it holds itself.
  const { key } = await access.createApiKey(org.org_id, { scopes: [...SCOPES], mode: 'test' });

  await seed(app.get(EventStore), org.org_id, n);

  // A policy that escalates above $200, and transactions the API makes: pending reviews and a real timeline.
  await api(url, key, 'PUT', '/api/cdp/policies/default', { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } });
  const expiration_iso = new Date(Date.now() + 24 * 3600_000).toISOString();
  let timelineId = '';
  for (let i = 0; i < 12; i++) {
    const d = await api(url, key, 'POST', '/api/cdp/authorize', { amount_cents: i < 10 ? 25_000 + i : 1_500, currency: 'USD', merchant_id: `m_shop${i}`, purpose_tag: 'travel', expiration_iso });
    if (i === 11) timelineId = d.transaction_id as string;
  }
  await api(url, key, 'POST', '/api/cdp/webhooks/endpoints', { url: 'https://93.184.215.14/hook', event_types: ['execution.succeeded'], description: 'bench' }).catch((err) => log(`console: no webhook endpoint (${errorMessage(err)})`));
  const invited = await api(url, key, 'POST', '/api/users', { email: `bench-${randomBytes(4).toString('hex')}@example.com`, display_name: 'Bench Admin', role: 'admin' });
  const link = new URL(invited.url as string);

  const { chromium } = await import('playwright-core');
  let browser: Browser | null = null;
  const forget = cleanupOnInterrupt(async () => void (await browser?.close()));
  try {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${url}${link.pathname}${link.search}`);
    await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/console/sign-in')), page.click('#use-link')]);

    const candidates: [string, string][] = [
      ['approvals', '/console/approvals'],
      ['transactions', '/console/transactions'],
      ['transactions_status', '/console/transactions?status=receipt_issued'],
      ['transactions_merchant', '/console/transactions?merchant_id=m_shop3'],
      ['transactions_agent', '/console/transactions?agent=agent-7'],
      ['transactions_range', `/console/transactions?from=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`],
      ['timeline', `/console/transactions/${timelineId}`],
      ['webhooks', '/console/webhooks'],
      ['policies', '/console/policies'],
      ['certificates', '/console/certificates'],
      ['keys', '/console/keys'],
      ['people', '/console/people'],
      ['account', '/console/account'],
    ];
    const pages: Record<string, unknown> = {};
    const allFcp: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    let measured = 0;
    const started = performance.now();
    for (const [name, path] of candidates) {
      // A page another change has not built yet (404) is left out rather than counted.
      const probe = await page.goto(`${url}${path}`);
      if (probe?.status() === 404 && (name === 'keys' || name === 'people')) {
        log(`console: ${path} is not served; left out`);
        continue;
      }
      const samples: PageSample[] = [];
      for (let i = 0; i < loads; i++) {
        const res = await page.goto(`${url}${path}`, { waitUntil: 'load' });
        const timing = await page.evaluate(async () => {
          // The browser's Performance (this function runs in the page; Node's typings lack these entry types).
          type Entry = { name: string; startTime: number; requestStart: number; responseStart: number; responseEnd: number; transferSize: number; encodedBodySize: number };
          const w = globalThis as unknown as {
            performance: { getEntriesByType(type: string): Entry[] };
            PerformanceObserver: new (cb: (list: { getEntries(): Entry[] }) => void) => { observe(o: { type: string; buffered: boolean }): void; disconnect(): void };
            setTimeout(fn: () => void, ms: number): unknown;
          };
          const nav = w.performance.getEntriesByType('navigation')[0];
          // The paint entry can be queued after the load event: wait for it (buffered), at most 3 s.
          const fcp = await new Promise<Entry | null>((resolve) => {
            const now = w.performance.getEntriesByType('paint').find((e) => e.name === 'first-contentful-paint');
            if (now) return resolve(now);
            const observer = new w.PerformanceObserver((list) => {
              const e = list.getEntries().find((x) => x.name === 'first-contentful-paint');
              if (e) {
                observer.disconnect();
                resolve(e);
              }
            });
            observer.observe({ type: 'paint', buffered: true });
            w.setTimeout(() => {
              observer.disconnect();
              resolve(null);
            }, 3000);
          });
          return nav ? { fcp: fcp ? fcp.startTime : null, server: nav.responseEnd - nav.requestStart, ttfb: nav.responseStart - nav.startTime, bytes: nav.transferSize || nav.encodedBodySize } : null;
        });
        measured++;
        if (res?.status() !== 200 || !timing || timing.fcp === null) {
          errors++;
          firstError ??= `${path}: status ${res?.status()}, ${timing ? 'no first-contentful-paint entry' : 'no navigation entry'}`;
          continue;
        }
        samples.push({ fcp: timing.fcp, server: timing.server, ttfb: timing.ttfb, bytes: timing.bytes });
        allFcp.push(timing.fcp);
      }
      const fcp = sorted(samples.map((s) => s.fcp));
      const server = sorted(samples.map((s) => s.server));
      const ttfb = sorted(samples.map((s) => s.ttfb));
      pages[name] = {
        path: path.split('?')[0] + (path.includes('?') ? '?…' : ''),
        fcp_p50_ms: round(percentile(fcp, 50), 1),
        fcp_p99_ms: round(percentile(fcp, 99), 1),
        server_p50_ms: round(percentile(server, 50), 1),
        server_p99_ms: round(percentile(server, 99), 1),
        ttfb_p50_ms: round(percentile(ttfb, 50), 1),
        html_bytes: samples[0]?.bytes ?? 0,
      };
      log(`console: ${name}: first contentful paint p50 ${percentile(fcp, 50).toFixed(1)} ms, p99 ${percentile(fcp, 99).toFixed(1)} ms; server p50 ${percentile(server, 50).toFixed(1)} ms`);
    }
    const elapsed = performance.now() - started;
    const all = sorted(allFcp);
    const worst = Math.max(0, ...Object.values(pages).map((p) => (p as { fcp_p99_ms: number }).fcp_p99_ms));
    return {
      bench: 'console',
      mode,
      n: measured,
      concurrency: 1,
      ops_per_s: round(measured / (elapsed / 1000), 1),
      p50_ms: round(percentile(all, 50), 2),
      p99_ms: round(percentile(all, 99), 2),
      errors,
      ...(firstError ? { error: firstError } : {}),
      transactions: n + 12,
      loads_per_page: loads,
      target_ms: TARGET_MS,
      worst_page_fcp_p99_ms: worst,
      pages,
    };
  } finally {
    forget();
    await browser?.close();
  }
}

export const consoleScenario: Scenario = {
  name: 'console',
  description: "the console's pages in Chromium with 10,000 transactions: first contentful paint and server time per page",
  modes: ['embedded', 'postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 10_000);
    const base = { bench: 'console', mode, n, concurrency: 1 };
    try {
      // The timeline page checks the chain with the SDK's browser bundle: built when missing or stale.
      execFileSync(process.execPath, [join(process.cwd(), 'scripts/sdk-build.js'), 'browser'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 180_000 });
      if (mode === 'embedded') {
        const dataDir = mkdtempSync(join(tmpdir(), 'sigil-bench-console-'));
        const forget = cleanupOnInterrupt(async () => rmSync(dataDir, { recursive: true, force: true }));
        try {
          const { app, url } = await startApi(mode, { DATA_DIR: dataDir });
          try {
            return await measure(app, url, mode, n);
          } finally {
            await app.close();
          }
        } finally {
          forget();
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
      return await withBenchSchema('bench_console', async (schema) => {
        const db = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
        const { app, url } = await startApi(mode, {
          DATABASE_URL: `${db}${db.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
          KEY_ENCRYPTION_KEY: process.env.KEY_ENCRYPTION_KEY ?? TEST_KEY_ENCRYPTION_KEY,
        });
        try {
          return await measure(app, url, mode, n);
        } finally {
          await app.close();
        }
      });
    } catch (err) {
      return failedResult(base, errorMessage(err));
    }
  },
};
