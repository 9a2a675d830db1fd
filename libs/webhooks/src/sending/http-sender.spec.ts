import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpSender } from './http-sender';
import { ResolvedAddress, TargetGuard } from './target-guard';

describe('HttpSender keep-alive', () => {
  let server: Server;
  let port: number;
  const seen: { local: string; remotePort: number; host: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ local: req.socket.localAddress!, remotePort: req.socket.remotePort!, host: String(req.headers.host) });
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('reuses a connection only for the address it was opened to, keeping the hostname for Host', async () => {
    let answer: ResolvedAddress = { address: '127.0.0.1', family: 4 };
    const sut = new HttpSender(new TargetGuard(true, async () => [answer]), 2000);
    try {
      const send = async () => expect((await sut.send(`http://receiver.test:${port}/hook`, '{}', {})).statusCode).toBe(200);
      await send();
      await send();
      answer = { address: '127.0.0.2', family: 4 }; // the name now resolves elsewhere
      await send();
      answer = { address: '127.0.0.1', family: 4 };
      await send();
      expect(seen.map((s) => s.local)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.2', '127.0.0.1']);
      expect(seen[1].remotePort).toBe(seen[0].remotePort); // kept alive
      expect(seen[3].remotePort).toBe(seen[0].remotePort); // the first address's socket, still pooled
      expect(new Set(seen.map((s) => s.host))).toEqual(new Set([`receiver.test:${port}`]));
    } finally {
      sut.close();
    }
  });
});

describe('HttpSender response bodies', () => {
  it('keeps a body holding U+0000 as text PostgreSQL can store (the NUL replaced), so the attempt can be recorded', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end(Buffer.from('ok\u0000bye', 'utf8')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sut = new HttpSender(new TargetGuard(true), 2000);
    try {
      const r = await sut.send(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, '{}', {});
      expect(r).toMatchObject({ statusCode: 200, responseBody: 'ok\ufffdbye' });
    } finally {
      sut.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
