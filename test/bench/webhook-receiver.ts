/**
 * The `webhook` scenario's receiver: a node:http server on 127.0.0.1 in its own worker thread,
 * so it never competes with the service for the bench process's event loop. It answers every
 * POST with 200 at once, checks each request's v1 signature (HMAC-SHA256 with the endpoint's
 * secret) and every `ed25519Every`-th request's v1a (Ed25519, the keys document), and records
 * the first time each (path, webhook-id) arrived.
 *
 * Protocol with the parent: workerData = ReceiverInit; it posts {port} once listening; counters
 * live in a SharedArrayBuffer (COUNTERS); messages are ReceiverMessage: on `dump` it posts
 * {keys, times} (first arrivals, epoch ms with sub-ms precision), on `close` it stops.
 */
import { createHmac, createPublicKey, KeyObject, timingSafeEqual, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface ReceiverInit {
  /** Raw Ed25519 public keys, base64url (the keys document's `public_key`). */
  publicKeys: string[];
  ed25519Every: number;
  counters: SharedArrayBuffer;
}

/** Parent → receiver. `secret` registers a path's `whsec_` secret (before events flow), answered {ok: true}. */
export type ReceiverMessage = { type: 'secret'; path: string; secret: string } | { type: 'dump' } | { type: 'close' };

/** Indexes into the Int32Array over `counters`. */
export const COUNTERS = { unique: 0, duplicates: 1, badSignatures: 2, ed25519Checked: 3, requests: 4, size: 5 } as const;

const now = () => performance.timeOrigin + performance.now();

function main(init: ReceiverInit): void {
  const counters = new Int32Array(init.counters);
  const keys = new Map<string, Buffer>();
  const publicKeys: KeyObject[] = init.publicKeys.map((x) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' }));
  const firstSeen = new Map<string, number>();
  let requests = 0;

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
    if (requests % init.ed25519Every !== 0) return true;
    Atomics.add(counters, COUNTERS.ed25519Checked, 1);
    const v1a = parts.find((p) => p.startsWith('v1a,'));
    return !!v1a && publicKeys.some((k) => verify(null, content, k, Buffer.from(v1a.slice(4), 'base64')));
  };

  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      requests++;
      Atomics.add(counters, COUNTERS.requests, 1);
      const path = (req.url ?? '/').split('?')[0];
      const id = String(req.headers['webhook-id'] ?? '');
      const key = `${path} ${id}`;
      if (firstSeen.has(key)) Atomics.add(counters, COUNTERS.duplicates, 1);
      else {
        firstSeen.set(key, at);
        Atomics.add(counters, COUNTERS.unique, 1);
      }
      const ok = signatureOk(path, id, String(req.headers['webhook-timestamp'] ?? ''), Buffer.concat(chunks), String(req.headers['webhook-signature'] ?? ''));
      if (!ok) Atomics.add(counters, COUNTERS.badSignatures, 1);
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    });
  });
  server.listen(0, '127.0.0.1', () => parentPort!.postMessage({ port: (server.address() as AddressInfo).port }));

  parentPort!.on('message', (msg: ReceiverMessage) => {
    if (msg.type === 'secret') {
      keys.set(msg.path, Buffer.from(msg.secret.slice('whsec_'.length), 'base64'));
      parentPort!.postMessage({ ok: true });
    } else if (msg.type === 'dump') {
      const times = new Float64Array(firstSeen.size);
      let i = 0;
      for (const t of firstSeen.values()) times[i++] = t;
      parentPort!.postMessage({ keys: [...firstSeen.keys()], times }, [times.buffer]);
    } else {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }
  });
}

if (parentPort && workerData?.counters) main(workerData as ReceiverInit);
