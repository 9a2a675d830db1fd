import { readFile } from 'node:fs/promises';
import { canonicalJson, DECISION_SCHEMA_VERSION, hashContent, RECEIPT_SCHEMA_VERSION, REVIEW_SCHEMA_VERSION, SIGNED_RECORD_SCHEMA_VERSIONS, SigilClient, SigilError, TERMINAL_STATUSES, TIMELINE_ANCHORED, verifyCertificate, verifyReceipt, verifyTimeline } from '../src';
import type { SignedRecordSchemaVersion } from '../src';
import { flag, parseArgs, Parsed, UsageError } from './args';

/**
 * `sigil`: verify certificates, receipts and transaction timelines, and hash files as the service
 * does. Offline whenever it is given files (and a keys document); otherwise it asks the service.
 * Exit codes: 0 valid, 1 invalid, 2 usage error, unreadable input, or the service could not be
 * reached or answered an error.
 */

export const USAGE = `usage: sigil <command> [options]

  sigil verify <certificate-id | signed-payload.json> [--keys keys.json] [--base-url URL] [--artifact file]
      Checks a certificate's Ed25519 signature against the signing keys, here. Fully offline
      with a file and --keys; a certificate id, or no --keys, asks the service (--base-url).
      --artifact also checks that file's hash against the certified dataset_hash.
  sigil receipt verify <receipt.json> [--keys keys.json] [--base-url URL] [--schema KIND|any]
      Checks a payment receipt (payment_receipt.v1) or a decision record (payment_decision.v1)
      with every signed human review it carries. Any other kind (a bare payment_review.v1 or
      payment_timeline_anchor.v1) is invalid (unexpected_schema_version) unless --schema names
      it (or is any).
  sigil timeline verify <transaction-id | timeline.json> [--base-url URL --api-key KEY]
                        [--receipt receipt.json] [--keys keys.json]
      Recomputes a transaction's hash chain and checks its end: a terminal timeline must end with
      its signed anchor (payment_timeline_anchor.v1), checked against the signing keys, so one cut
      short is invalid. With its receipt, checks the receipt and that it is bound to the chain.
  sigil hash <file>
      Prints sha256:<hex> as the service computes an artifact's hash: JSON canonicalized
      (RFC 8785) first, anything else as its raw bytes.

Options: --json (machine output: one JSON object on stdout), --attempts <1-6> (tries per call, default 6),
--help, --version. SIGIL_BASE_URL and SIGIL_API_KEY stand in for --base-url and --api-key.
Exit codes: 0 valid, 1 invalid, 2 usage error, unreadable input, or a service or network error.
`;

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  fetch?: typeof fetch;
  version?: string;
}

/** What a command found: its verdict, a line for people, and the object for --json. */
interface Outcome {
  valid: boolean;
  lines: string[];
  json: Record<string, unknown>;
}

const COMMON = ['attempts'];

async function readJson(path: string, what: string): Promise<unknown> {
  const text = await readText(path, what);
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${what} ${path} is not JSON`);
  }
}

async function readText(path: string, what: string): Promise<string> {
  return (await readBytes(path, what)).toString('utf8');
}

async function readBytes(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new UsageError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** A client for the service, when a base URL is known (flag, then SIGIL_BASE_URL). */
function clientFor(p: Parsed, io: CliIo, needed: string): SigilClient {
  const baseUrl = flag(p, 'base-url') ?? io.env.SIGIL_BASE_URL;
  if (!baseUrl) throw new UsageError(`${needed}: give --base-url (or set SIGIL_BASE_URL)`);
  if (!/^https?:\/\/[^/]/i.test(baseUrl)) throw new UsageError(`--base-url must be an http(s) URL, not ${JSON.stringify(baseUrl)}`);
  const attempts = flag(p, 'attempts');
  if (attempts !== undefined && !/^[1-6]$/.test(attempts)) throw new UsageError('--attempts must be 1..6');
  return new SigilClient({ baseUrl, apiKey: flag(p, 'api-key') ?? io.env.SIGIL_API_KEY, fetch: io.fetch, maxAttempts: attempts ? Number(attempts) : undefined });
}

const keysFrom = async (p: Parsed, io: CliIo, needed: string) => {
  const file = flag(p, 'keys');
  return file ? readJson(file, 'keys document') : clientFor(p, io, needed).getSigningKeys();
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TRANSACTION_ID = /^txn_[0-9a-f]{32}$/;

function one(p: Parsed, what: string): string {
  if (p.positionals.length !== 1) throw new UsageError(`expected one ${what}${p.positionals.length > 1 ? `, got ${p.positionals.length} arguments` : ''}`);
  return p.positionals[0];
}

const warningsOf = (w: string[]) => w.map((x) => `warning: ${x}`);

async function verifyCommand(argv: string[], io: CliIo): Promise<Outcome> {
  const p = parseArgs(argv, [...COMMON, 'keys', 'base-url', 'artifact']);
  const target = one(p, 'certificate id or signed-payload file');
  const online = UUID.test(target);
  const signed = online ? await clientFor(p, io, 'a certificate id is looked up on the service').getSignedPayload(target) : await readJson(target, 'signed payload');
  const keys = await keysFrom(p, io, 'the signing keys are needed: give --keys keys.json to stay offline');
  const artifact = flag(p, 'artifact');
  const artifactHash = artifact ? hashContent(await readBytes(artifact, 'artifact')) : undefined;
  // Looked up by id: the payload served must be that certificate's.
  const r = verifyCertificate(signed, keys, { ...(artifactHash ? { artifactHash } : {}), ...(online ? { certificateId: target } : {}) });
  const subject = `certificate ${r.certificate_id ?? '(no id)'}${r.schema_version ? ` (${r.schema_version})` : ''}`;
  const key = r.key_id ? ` by key ${r.key_id}${r.key_status ? ` (${r.key_status})` : ''}` : '';
  const lines = r.valid
    ? [`valid: ${subject} signed${key}, issued ${r.issued_at}${r.artifact_hash_match ? `; ${artifact} matches its dataset_hash` : ''}`]
    : [`invalid: ${r.reason}: ${subject}${key}${r.reason === 'artifact_hash_mismatch' ? `; ${artifact} hashes to ${artifactHash}` : ''}`];
  return { valid: r.valid, lines: [...lines, ...warningsOf(r.warnings)], json: { ...r, ...(artifactHash ? { artifact_hash: artifactHash } : {}), source: online ? 'service' : target } };
}

/** A receipt file may hold the receipt, or `{ receipt }` as POST /api/cdp/receipts/verify takes it. */
const unwrapReceipt = (doc: unknown) => (typeof doc === 'object' && doc !== null && 'receipt' in doc && !('payload' in doc) ? (doc as { receipt: unknown }).receipt : doc);

async function receiptCommand(argv: string[], io: CliIo): Promise<Outcome> {
  const [sub, ...rest] = argv;
  if (sub !== 'verify') throw new UsageError(sub ? `unknown command: receipt ${sub}` : 'sigil receipt verify <file>');
  const p = parseArgs(rest, [...COMMON, 'keys', 'base-url', 'schema']);
  const file = one(p, 'receipt file');
  const schemaFlag = flag(p, 'schema');
  if (schemaFlag !== undefined && schemaFlag !== 'any' && !(SIGNED_RECORD_SCHEMA_VERSIONS as readonly string[]).includes(schemaFlag)) {
    throw new UsageError(`--schema must be any or one of ${SIGNED_RECORD_SCHEMA_VERSIONS.join(', ')}`);
  }
  const receipt = unwrapReceipt(await readJson(file, 'receipt'));
  const keys = await keysFrom(p, io, 'the signing keys are needed: give --keys keys.json to stay offline');
  const describe = (r: ReturnType<typeof verifyReceipt>) => {
    const what = `${r.schema_version ?? 'record'}${r.receipt_hash ? ` ${r.receipt_hash}` : ''}`;
    return r.valid ? `valid: ${what} signed by key ${r.key_id} (${r.key_status}), ${r.issued_at}` : `invalid: ${r.reason}: ${what}`;
  };
  // A receipt, or a decision record (GET …/decision); a bare review or anchor only when --schema names it (or any).
  const expectedSchema = (schemaFlag as SignedRecordSchemaVersion | 'any' | undefined) ?? ([RECEIPT_SCHEMA_VERSION, DECISION_SCHEMA_VERSION] as const);
  const r = verifyReceipt(receipt, keys, { expectedSchema });
  // A decision document carries every person's signed review of it: each must verify too.
  const reviewDocs = typeof receipt === 'object' && receipt !== null && Array.isArray((receipt as { reviews?: unknown }).reviews) ? (receipt as { reviews: unknown[] }).reviews : [];
  const reviews = reviewDocs.map((doc) => verifyReceipt(doc, keys, { expectedSchema: REVIEW_SCHEMA_VERSION }));
  const valid = r.valid && reviews.every((x) => x.valid);
  const lines = [describe(r), ...warningsOf(r.warnings), ...reviews.flatMap((x, i) => [`review ${i + 1}: ${describe(x)}`, ...warningsOf(x.warnings)])];
  return { valid, lines, json: { ...r, valid, ...(reviewDocs.length ? { reviews } : {}) } };
}

async function timelineCommand(argv: string[], io: CliIo): Promise<Outcome> {
  const [sub, ...rest] = argv;
  if (sub !== 'verify') throw new UsageError(sub ? `unknown command: timeline ${sub}` : 'sigil timeline verify <transaction-id | timeline.json>');
  const p = parseArgs(rest, [...COMMON, 'keys', 'base-url', 'api-key', 'receipt']);
  const target = one(p, 'transaction id or timeline file');
  const online = TRANSACTION_ID.test(target);
  const client = online ? clientFor(p, io, 'a transaction id is looked up on the service') : null;
  if (client && !(flag(p, 'api-key') ?? io.env.SIGIL_API_KEY)) throw new UsageError('reading a transaction needs --api-key (or SIGIL_API_KEY) with payments:read');
  const timeline = client ? await client.getTransactionEvents(target) : await readJson(target, 'timeline');
  const events = (timeline as { events?: Array<{ event_type?: string; status?: unknown }> }).events;
  // Online, the transaction's status says where its timeline must end (a terminal one cut off with its anchor shows).
  const expectedStatus = client ? (await client.getTransaction(target)).status : undefined;
  // The receipt binds the chain to a settled payment: given as a file, or fetched when the transaction has one.
  const receiptFile = flag(p, 'receipt');
  const hasReceipt = Array.isArray(events) && events.some((e) => e?.event_type === 'receipt.issued');
  const receipt = receiptFile ? unwrapReceipt(await readJson(receiptFile, 'receipt')) : client && hasReceipt ? await client.getReceipt(target) : null;
  // A terminal timeline's anchor is signed: its check needs the keys (a file, or the service's).
  const ends = Array.isArray(events) && events.some((e) => e?.event_type === TIMELINE_ANCHORED || TERMINAL_STATUSES.includes(String(e?.status)));
  const keys = receipt !== null || ends || flag(p, 'keys') ? await keysFrom(p, io, 'checking the timeline’s anchor needs the signing keys: give --keys keys.json (or --base-url)') : undefined;
  const receiptCheck = receipt === null ? null : verifyReceipt(receipt, keys);
  const bound = (receipt as { payload?: { timeline_last_event_hash?: unknown } } | null)?.payload?.timeline_last_event_hash;
  const chain = verifyTimeline(timeline, {
    ...(online ? { transactionId: target } : {}),
    ...(typeof bound === 'string' ? { includesHash: bound } : {}),
    ...(keys === undefined ? {} : { keys }),
    ...(expectedStatus === undefined ? {} : { expectedStatus }),
  });
  const valid = chain.valid && (receiptCheck === null || receiptCheck.valid);
  const anchor = chain.anchor;
  const end =
    anchor?.state === 'anchored'
      ? `, ended ${anchor.terminal_status} and anchored (key ${anchor.key_id}, ${anchor.key_status})`
      : anchor?.state === 'open'
        ? ', open (not in a terminal state yet: its end is anchored once it is)'
        : '';
  const lines = [
    chain.valid
      ? `valid: ${chain.stream_id}: ${chain.events} events, hash chain intact${end}${receiptCheck ? ', and the receipt is bound to it' : ''}`
      : `invalid: ${chain.reason}: ${chain.stream_id ?? 'timeline'}${chain.broken_at_revision !== undefined ? ` at revision ${chain.broken_at_revision}` : ''}${chain.field ? ` (${chain.field})` : ''}${anchor?.detail ? `: ${anchor.detail}` : ''}`,
    ...warningsOf(chain.warnings ?? []),
  ];
  if (receiptCheck) lines.push(receiptCheck.valid ? `receipt: valid, signed by key ${receiptCheck.key_id} (${receiptCheck.key_status})` : `receipt: invalid: ${receiptCheck.reason}`);
  return { valid, lines, json: { valid, timeline: chain, receipt: receiptCheck } };
}

async function hashCommand(argv: string[]): Promise<Outcome> {
  const p = parseArgs(argv, []);
  const file = one(p, 'file');
  const bytes = await readBytes(file, 'file');
  let hash: string;
  try {
    hash = hashContent(bytes);
  } catch (err) {
    throw new UsageError(`${file} cannot be certified: ${(err as Error).message}`);
  }
  // As at issuance: `jcs-sha256` when the content is UTF-8 JSON, `sha256` of the bytes otherwise.
  let algorithm = 'sha256';
  try {
    canonicalJson(JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)));
    algorithm = 'jcs-sha256';
  } catch {
    /* not UTF-8 JSON: the raw bytes were hashed */
  }
  return { valid: true, lines: [hash], json: { hash, algorithm, file } };
}

/** Runs one command line; resolves with the exit code. Never throws. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const json = argv.includes('--json');
  const fail = (code: string, message: string): number => {
    if (json) io.stdout(`${JSON.stringify({ ok: false, error: code, message })}\n`);
    else io.stderr(`sigil: ${message}\n${code === 'usage' ? `\n${USAGE}` : ''}`);
    return 2;
  };
  const [command, ...rest] = argv.filter((a) => a !== '--json');
  try {
    if (command === undefined || command === 'help' || command === '--help') {
      if (command === undefined) return fail('usage', 'no command');
      io.stdout(USAGE);
      return 0;
    }
    if (command === '--version') {
      io.stdout(`${io.version ?? 'unknown'}\n`);
      return 0;
    }
    if (rest.includes('--help')) {
      io.stdout(USAGE);
      return 0;
    }
    const commands: Record<string, (a: string[]) => Promise<Outcome>> = {
      verify: (a) => verifyCommand(a, io),
      receipt: (a) => receiptCommand(a, io),
      timeline: (a) => timelineCommand(a, io),
      hash: (a) => hashCommand(a),
    };
    const handler = commands[command];
    if (!handler) return fail('usage', `unknown command: ${command}`);
    const outcome = await handler(rest);
    if (json) io.stdout(`${JSON.stringify({ ok: true, ...outcome.json })}\n`);
    else io.stdout(`${outcome.lines.join('\n')}\n`);
    return outcome.valid ? 0 : 1;
  } catch (err) {
    if (err instanceof UsageError) return fail('usage', err.message);
    if (err instanceof SigilError) {
      const what = err.status === 0 ? `cannot reach the service: ${err.message}` : `the service answered ${err.status} ${err.code}: ${err.message}`;
      return fail(err.status === 0 ? 'network_error' : err.code, what);
    }
    return fail('internal_error', err instanceof Error ? err.message : String(err));
  }
}
