import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { AppError, DomainError } from '@app/core';
import { CliError, CliServices, legacyCertificatesFrom, parseCommand, RunnableCommand, runCommand } from './cli';

/**
 * The operator channel: how the admin CLI reaches a running embedded server. PGlite is one
 * process's database, so while `npm start` holds DATA_DIR the CLI cannot open it; instead the
 * server listens on a Unix socket inside DATA_DIR/operator/ (a directory of mode 0700 beside a
 * token file of mode 0600), and the CLI sends it its command line (argv), which the server parses
 * again with the CLI's own parseCommand (every check of the command line applies: a request is
 * never a pre-parsed command the server would trust) and runs through the same runCommand and
 * command handlers as the CLI would. A legacy import sends its file's text, which the server
 * checks as the CLI does. A Unix socket is reachable only from this machine, and only by the user
 * who can read the token (the server's user).
 *
 * Protocol: one JSON line each way, then the connection closes.
 *   request  {"token":"<hex>","argv":["keys:create","--org",…],"legacy_file"?:"<the import file's text>"}
 *   answer   {"ok":true,"result":{...}}  |  {"ok":false,"error":"<code>","message":"...","details"?:...,"exit_code":1|2}
 */

export const operatorDir = (dataDir: string) => join(resolve(dataDir), 'operator');
export const operatorSocketPath = (dataDir: string) => join(operatorDir(dataDir), 'cli.sock');
export const operatorTokenPath = (dataDir: string) => join(operatorDir(dataDir), 'token');

/** Longest request accepted (a legacy import carries its certificates). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
const IDLE_TIMEOUT_MS = 120_000;
/** Most arguments a command line may have (the longest command has a dozen). */
const MAX_ARGS = 64;
/** Linux's sun_path is 108 bytes, with its terminating NUL. */
const MAX_SOCKET_PATH = 107;

export type OperatorAnswer = { ok: true; result: object } | { ok: false; error: string; message: string; details?: unknown; exit_code: 1 | 2 };

export interface OperatorChannel {
  socketPath: string;
  close(): Promise<void>;
}

interface ChannelLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

function answerFor(err: unknown, log: ChannelLog): OperatorAnswer {
  if (err instanceof CliError) return { ok: false, error: err.code, message: err.message, details: err.details, exit_code: err.exitCode };
  if (err instanceof AppError || err instanceof DomainError) return { ok: false, error: err.code, message: err.message, details: err.details, exit_code: 1 };
  log.error({ err }, 'operator command failed');
  return { ok: false, error: 'internal_error', message: 'the server could not run the command (see its log)', exit_code: 1 };
}

/**
 * Serves the operator channel for this server (embedded mode: the caller holds DATA_DIR's
 * lock, so any socket left there is a dead server's and is replaced). Returns null, with a
 * warning, when the socket's path is too long for the platform.
 */
export async function serveOperatorChannel(dataDir: string, services: CliServices, log: ChannelLog): Promise<OperatorChannel | null> {
  const dir = operatorDir(dataDir);
  const socketPath = operatorSocketPath(dataDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    log.warn({ socket: socketPath }, 'operator channel off: DATA_DIR is too long a path for a Unix socket; the admin CLI will ask to stop the server');
    return null;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  rmSync(socketPath, { force: true });
  const token = randomBytes(32);
  const tokenPath = operatorTokenPath(dataDir);
  rmSync(tokenPath, { force: true });
  writeFileSync(tokenPath, token.toString('hex'), { mode: 0o600, flag: 'wx' });

  const handle = (socket: Socket) => {
    socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => undefined);
    let buffered = '';
    let received = 0;
    let done = false;
    const reply = (answer: OperatorAnswer) => {
      done = true;
      socket.end(`${JSON.stringify(answer)}\n`);
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      if (done) return;
      received += Buffer.byteLength(chunk);
      if (received > MAX_REQUEST_BYTES) return reply({ ok: false, error: 'payload_too_large', message: 'the request is too large for the operator channel', exit_code: 1 });
      buffered += chunk;
      const end = buffered.indexOf('\n');
      if (end < 0) return;
      done = true;
      void run(buffered.slice(0, end)).then(reply);
    });
  };

  const run = async (line: string): Promise<OperatorAnswer> => {
    let request: { token?: unknown; argv?: unknown; legacy_file?: unknown };
    try {
      request = JSON.parse(line);
    } catch {
      return { ok: false, error: 'bad_request', message: 'the operator request is not JSON', exit_code: 1 };
    }
    const sent = typeof request?.token === 'string' && /^[0-9a-f]{64}$/.test(request.token) ? Buffer.from(request.token, 'hex') : null;
    if (!sent || !timingSafeEqual(sent, token)) {
      log.warn({}, 'operator channel: a request with a wrong token was refused');
      return { ok: false, error: 'auth_required', message: 'the operator token does not match this server', exit_code: 1 };
    }
    const argv = request.argv;
    if (!Array.isArray(argv) || argv.length === 0 || argv.length > MAX_ARGS || !argv.every((a): a is string => typeof a === 'string')) {
      return { ok: false, error: 'bad_request', message: `the operator request carries no command line (argv: 1..${MAX_ARGS} strings)`, exit_code: 1 };
    }
    let command: RunnableCommand;
    try {
      const parsed = parseCommand(argv);
      if (parsed.command === 'help') return { ok: false, error: 'bad_request', message: 'help is not run through the operator channel', exit_code: 2 };
      const text = request.legacy_file;
      command =
        parsed.command === 'certificates:import-legacy'
          ? {
              ...parsed,
              certificates: legacyCertificatesFrom(parsed.file, () => {
                if (typeof text !== 'string') throw new Error('the file was not sent with the request');
                return text;
              }),
            }
          : parsed;
    } catch (err) {
      return answerFor(err, log);
    }
    try {
      const result = await runCommand(command, services);
      log.info({ command: command.command }, 'operator command run through the operator channel');
      return { ok: true, result };
    } catch (err) {
      return answerFor(err, log);
    }
  };

  const server: Server = createServer(handle);
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(socketPath, () => {
      server.off('error', fail);
      ok();
    });
  });
  // The directory (0700) already keeps other users out; the socket itself too.
  chmodSync(socketPath, 0o600);
  return {
    socketPath,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        rmSync(tokenPath, { force: true });
        rmSync(socketPath, { force: true });
      }),
  };
}

/**
 * Sends a command to the server holding DATA_DIR. Null when there is no channel to reach (no
 * socket or token, nobody listening, or no permission to read the token): the caller then says
 * what to do instead.
 */
export async function sendToOperatorChannel(dataDir: string, request: { argv: string[]; legacyFile?: string }, timeoutMs = 120_000): Promise<OperatorAnswer | null> {
  let token: string;
  try {
    token = readFileSync(operatorTokenPath(dataDir), 'utf8').trim();
  } catch {
    return null;
  }
  return new Promise((resolveAnswer, reject) => {
    const socket = createConnection(operatorSocketPath(dataDir));
    let answer = '';
    let connected = false;
    socket.setEncoding('utf8');
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new CliError('operator_channel_timeout', `the running server did not answer within ${timeoutMs / 1000} s`, 1));
    });
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify({ token, argv: request.argv, ...(request.legacyFile === undefined ? {} : { legacy_file: request.legacyFile }) })}\n`);
    });
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected) return resolveAnswer(null);
      reject(new CliError('operator_channel_failed', `the connection to the running server failed: ${err.message}`, 1));
    });
    socket.on('close', () => {
      if (!connected) return;
      const line = answer.split('\n').find(Boolean);
      try {
        resolveAnswer(JSON.parse(line ?? '') as OperatorAnswer);
      } catch {
        reject(new CliError('operator_channel_failed', 'the running server closed the operator channel without an answer', 1));
      }
    });
  });
}
