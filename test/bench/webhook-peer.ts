/**
 * The `webhook` scenario's other side, in its own process so that the service's process does
 * nothing but the service (and its CPU per delivery can be measured): it writes the commerce
 * events (the source, as api processes would) and receives the webhooks.
 *
 * The receiver is a node:http server on 127.0.0.1 that answers every POST with 200 at once,
 * checks each request's v1 signature (HMAC-SHA256 with the endpoint's secret) and every
 * `ed25519Every`-th request's v1a (Ed25519, the keys document), and keeps the first time each
 * (path, webhook-id) arrived. The source appends whole transaction lifecycles (8 events, the
 * commerce contract's shape) at a steady rate, with its own pool.
 *
 * Protocol (IPC, advanced serialization): PeerRequest in, PeerReply out, one reply per request.
 */
import { createHmac, createPublicKey, KeyObject, timingSafeEqual, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStore, OpenedEventStore, openEventStore } from '@app/event-store';
import { commerceLifecycle } from './commerce-events';

export type PeerRequest =
  | { type: 'init'; publicKeys: string[]; ed25519Every: number; databaseUrl: string; schema: string }
  | { type: 'secret'; path: string; secret: string }
  | { type: 'produce'; orgId: string; paths: string[]; deliveries: number; rate: number; concurrency: number }
  | { type: 'counts' }
  | { type: 'dump' }
  | { type: 'close' };

export interface PeerCounts {
  unique: number;
  duplicates: number;
  badSignatures: number;
  ed25519Checked: number;
  requests: number;
}

export type PeerReply =
  | { type: 'ready'; port: number }
  | { type: 'ok' }
  | { type: 'produced'; expected: [string, number][]; produceMs: number; maxInFlight: number }
  | ({ type: 'counts' } & PeerCounts)
  | { type: 'dump'; keys: string[]; times: Float64Array }
  | { type: 'error'; message: string };

export const EVENTS_PER_LIFECYCLE = 8;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One full lifecycle (nine events, eight webhook event types) as the commerce contract fixes it. */
const lifecycle = (orgId: string) => commerceLifecycle(orgId, 'full', 'api_key:key_bench');

/**
 * Appends lifecycles for `deliveries` deliveries at `rate` deliveries/s (0: as fast as
 * `concurrency` appenders go), recording each event's recorded_at per endpoint path.
 */
async function produce(store: EventStore, r: Extract<PeerRequest, { type: 'produce' }>): Promise<Extract<PeerReply, { type: 'produced' }>> {
  const appends = Math.ceil(r.deliveries / r.paths.length / EVENTS_PER_LIFECYCLE);
  const expected: [string, number][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let failure: unknown = null;
  const appendOne = async () => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const l = lifecycle(r.orgId);
      const result = await store.append(l.stream, l.events, { expectedRevision: 'no_stream' });
      for (const e of result.events) {
        const at = Date.parse(e.recorded_at);
        for (const p of r.paths) expected.push([`${p} ${e.event_id}`, at]);
      }
    } catch (err) {
      failure ??= err;
    } finally {
      inFlight--;
    }
  };
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  if (r.rate === 0) {
    let next = 0;
    await Promise.all(
      Array.from({ length: r.concurrency }, async () => {
        while (next < appends && !failure) {
          next++;
          await appendOne();
        }
      }),
    );
  } else {
    const appendsPerMs = r.rate / r.paths.length / EVENTS_PER_LIFECYCLE / 1000;
    let launched = 0;
    while (launched < appends && !failure) {
      const due = Math.min(appends, Math.floor((performance.now() - started) * appendsPerMs) + 1);
      for (; launched < due; launched++) {
        const p: Promise<void> = appendOne().finally(() => pending.delete(p));
        pending.add(p);
      }
      await sleep(2);
    }
  }
  await Promise.all(pending);
  if (failure) throw failure;
  return { type: 'produced', expected, produceMs: performance.now() - started, maxInFlight };
}

function main(): void {
  const counts: PeerCounts = { unique: 0, duplicates: 0, badSignatures: 0, ed25519Checked: 0, requests: 0 };
  const keys = new Map<string, Buffer>();
  const firstSeen = new Map<string, number>();
  let publicKeys: KeyObject[] = [];
  let ed25519Every = 50;
  let source: OpenedEventStore | null = null;
  const reply = (m: PeerReply) => process.send!(m);

  const signatureOk = (path: string, id: string, ts: string, body: Buffer, header: string): boolean => {
    const key = keys.get(path);
    if (!key) return false;
    const content = Buffer.concat([Buffer.from(`${id}.${ts}.`), body]);
    const parts = header.split(' ');
    const expected = createHmac('sha256', key).update(content).digest();
    const v1 = parts.some((p) => {
      if (!p.startsWith('v1,')) return false;
      const got = Buffer.from(p.slice(3), 'base64');
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
    if (!v1) return false;
    if (counts.requests % ed25519Every !== 0) return true;
    counts.ed25519Checked++;
    const v1a = parts.find((p) => p.startsWith('v1a,'));
    return !!v1a && publicKeys.some((k) => verify(null, content, k, Buffer.from(v1a.slice(4), 'base64')));
  };

  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      counts.requests++;
      const path = (req.url ?? '/').split('?')[0];
      const id = String(req.headers['webhook-id'] ?? '');
      const key = `${path} ${id}`;
      if (firstSeen.has(key)) counts.duplicates++;
      else {
        firstSeen.set(key, at);
        counts.unique++;
      }
      if (!signatureOk(path, id, String(req.headers['webhook-timestamp'] ?? ''), Buffer.concat(chunks), String(req.headers['webhook-signature'] ?? ''))) counts.badSignatures++;
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    });
  });

  process.on('message', (m: PeerRequest) => {
    void (async () => {
      switch (m.type) {
        case 'init':
          publicKeys = m.publicKeys.map((x) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' }));
          ed25519Every = m.ed25519Every;
          source = await openEventStore({ databaseUrl: m.databaseUrl, schema: m.schema });
          await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
          return reply({ type: 'ready', port: (server.address() as AddressInfo).port });
        case 'secret':
          keys.set(m.path, Buffer.from(m.secret.slice('whsec_'.length), 'base64'));
          return reply({ type: 'ok' });
        case 'produce':
          return reply(await produce(source!.store, m));
        case 'counts':
          return reply({ type: 'counts', ...counts });
        case 'dump':
          return reply({ type: 'dump', keys: [...firstSeen.keys()], times: Float64Array.from(firstSeen.values()) });
        case 'close':
          server.closeAllConnections();
          server.close();
          await source?.store.close();
          await source?.db.close();
          process.exit(0);
      }
    })().catch((err: unknown) => reply({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
  });
}

if (require.main === module) main();
