import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  AccessReadModel,
  AccessService,
  accessMigrations,
  CreateApiKeyCommand,
  CreateApiKeyHandler,
  CreateOrganizationCommand,
  CreateOrganizationHandler,
  OrganizationRepository,
  RevokeApiKeyCommand,
  RevokeApiKeyHandler,
} from '@app/access';
import { AppConfig, AppError, ConfigError, DomainError, errorBody, loadConfig, resolveKeyEncryptionKey, systemClock } from '@app/core';
import { consoleMigrations, ConsoleReadModel, InviteUserCommand, InviteUserHandler, IssueSignInLinkHandler, SignInLinkRepository, UserRepository } from '@app/console';
import { DataDirInUse, openEventStore, OpenedEventStore } from '@app/event-store';
import {
  certificateMigrations,
  CertificateRepository,
  creditMigrations,
  ImportLegacyCertificatesCommand,
  ImportLegacyCertificatesHandler,
  notaryProjections,
  RevokeSigningKeyCommand,
  RevokeSigningKeyHandler,
  RotateSigningKeyCommand,
  RotateSigningKeyHandler,
  SigningKeyRepository,
  SigningKeyStore,
  signingKeyMigrations,
} from '@app/notary';
import { CliError, Dispatch, legacyCertificatesFrom, parseCommand, RunnableCommand, runCommand, USAGE } from './cli';
import { sendToOperatorChannel } from './operator-channel';

/**
 * `npm run cli -- <command>`: the admin CLI. Plain TypeScript on the same store as the server
 * (no Nest). Prints exactly one JSON object as the last line of stdout; hints go to stderr.
 */

const printJson = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const hint = (text: string) => process.stderr.write(`${text}\n`);

function fail(err: CliError): number {
  printJson(errorBody(err.code, err.message, err.details));
  hint(`sigil cli: ${err.message}`);
  return err.exitCode;
}

/** The data directory is held by a running server: the command goes through its operator channel. */
class HeldByServer {
  constructor(readonly pid: number) {}
}

async function open(config: AppConfig): Promise<OpenedEventStore | HeldByServer> {
  try {
    return await openEventStore({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, migrations: [...accessMigrations, ...signingKeyMigrations, ...certificateMigrations, ...creditMigrations, ...consoleMigrations], projections: notaryProjections });
  } catch (err) {
    if (err instanceof DataDirInUse) return new HeldByServer(err.pid);
    throw new CliError('store_unavailable', `could not open the event store: ${(err as Error).message}`, 1);
  }
}

/**
 * Runs the command in the running server that holds the embedded data directory (its operator
 * channel, apps/cli/src/operator-channel.ts). When there is none to reach (an older server, a
 * process that is not a Sigil server, a DATA_DIR path too long for a socket), says what to do.
 */
async function throughServer(config: AppConfig, held: HeldByServer, request: { argv: string[]; legacyFile?: string }): Promise<object> {
  // The command line itself (and an import's file text): the server parses and checks it again.
  const answer = await sendToOperatorChannel(config.DATA_DIR, request);
  if (!answer) {
    throw new CliError(
      'data_dir_in_use',
      `the embedded data directory ${resolve(config.DATA_DIR)} is in use by process ${held.pid}, and no Sigil server answers on its operator channel ` +
        `(${resolve(config.DATA_DIR, 'operator', 'cli.sock')}, open only to the user the server runs as). Stop that process and run the command again, or use the console or the HTTP API ` +
        '(keys, people), or run the server and the CLI on the same PostgreSQL (DATABASE_URL).',
      1,
    );
  }
  hint(`sigil cli: ran through the running server (process ${held.pid}) that holds ${resolve(config.DATA_DIR)}`);
  if (!answer.ok) throw new CliError(answer.error, answer.message, answer.exit_code === 2 ? 2 : 1, answer.details);
  return answer.result;
}

function printHints(cmd: RunnableCommand, result: object): void {
  if (cmd.command === 'orgs:create') {
    hint(`next: npm run cli -- keys:create --org ${(result as { org_id: string }).org_id} --scopes <a,b> --mode test`);
  }
  if (cmd.command === 'keys:create') hint('store this key now: it is shown only once (the server keeps its hash only)');
  if (cmd.command === 'users:invite') hint('give this link to the person: it signs them in to the console once, within 30 minutes');
  if (cmd.command === 'certificates:import-legacy') {
    const r = result as { imported: number; already_imported: number; keys_registered: unknown[] };
    hint(`imported ${r.imported}, already present ${r.already_imported}, legacy keys registered ${r.keys_registered.length}`);
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  let cmd: RunnableCommand;
  let legacyFile: string | undefined;
  try {
    parsed = parseCommand(argv);
    if (parsed.command === 'help') {
      hint(USAGE);
      return 2;
    }
    // The import's file is read and checked before the store is opened.
    const p = parsed;
    cmd = p.command === 'certificates:import-legacy' ? { ...p, certificates: legacyCertificatesFrom(p.file, () => (legacyFile = readFileSync(p.file, 'utf8'))) } : p;
  } catch (err) {
    if (err instanceof CliError) {
      const code = fail(err);
      hint(`run "npm run cli -- help" for usage`);
      return code;
    }
    throw err;
  }

  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) return fail(new CliError('invalid_configuration', err.message, 1));
    throw err;
  }

  let opened: OpenedEventStore;
  try {
    const store = await open(config);
    if (store instanceof HeldByServer) {
      const result = await throughServer(config, store, { argv, ...(legacyFile === undefined ? {} : { legacyFile }) });
      printJson(result);
      printHints(cmd, result);
      return 0;
    }
    opened = store;
  } catch (err) {
    if (err instanceof CliError) return fail(err);
    throw err;
  }
  try {
    let signingKeys: SigningKeyStore | null = null;
    const keyEncryptionKey = () => {
      try {
        return resolveKeyEncryptionKey(config);
      } catch (err) {
        if (err instanceof ConfigError) throw new CliError('invalid_configuration', err.message, 1);
        throw err;
      }
    };
    const keyRepository = SigningKeyRepository.on(opened.db, opened.store);
    const openSigningKeys = async () => {
      if (signingKeys) return signingKeys;
      signingKeys = new SigningKeyStore(keyRepository, keyEncryptionKey());
      await signingKeys.start();
      return signingKeys;
    };
    const reads = new AccessReadModel(opened.db);
    const organizations = new OrganizationRepository(opened.store);
    // The CLI's command bus: each command to the handler the server registers for it.
    const handlers = new Map<unknown, () => Promise<{ execute(command: object): Promise<unknown> }>>([
      [CreateOrganizationCommand, async () => new CreateOrganizationHandler(organizations)],
      [CreateApiKeyCommand, async () => new CreateApiKeyHandler(organizations, config)],
      [RevokeApiKeyCommand, async () => new RevokeApiKeyHandler(organizations, reads)],
      [RotateSigningKeyCommand, async () => new RotateSigningKeyHandler(keyRepository, keyEncryptionKey())],
      [RevokeSigningKeyCommand, async () => new RevokeSigningKeyHandler(keyRepository, keyEncryptionKey())],
      [InviteUserCommand, async () => new InviteUserHandler(new UserRepository(opened.store), new IssueSignInLinkHandler(new SignInLinkRepository(opened.store), new ConsoleReadModel(opened.db), systemClock))],
      [ImportLegacyCertificatesCommand, async () => new ImportLegacyCertificatesHandler(keyRepository, new CertificateRepository(opened.store), opened.store, keyEncryptionKey())],
    ]);
    const dispatch: Dispatch = async <R>(command: object) => {
      const handler = handlers.get(command.constructor);
      if (!handler) throw new Error(`no handler for ${command.constructor.name}`);
      return (await (await handler()).execute(command)) as R;
    };
    const result = await runCommand(cmd, {
      access: new AccessService(reads, opened.store),
      baseUrl: config.BASE_URL,
      dispatch,
      signingKeys: openSigningKeys,
    }).finally(() => (signingKeys as SigningKeyStore | null)?.stop());
    printJson(result);
    printHints(cmd, result);
    return 0;
  } catch (err) {
    if (err instanceof AppError || err instanceof DomainError) return fail(new CliError(err.code, err.message, 1, err.details));
    if (err instanceof CliError) return fail(err);
    throw err;
  } finally {
    await opened.store.close().catch(() => undefined);
    await opened.db.close().catch(() => undefined);
  }
}

function exit(code: number): void {
  process.exitCode = code;
  // Everything is closed, so the process ends by itself; this only guards against a stray handle.
  setTimeout(() => process.exit(code), 2000).unref();
}

main(process.argv.slice(2)).then(exit, (err: unknown) => {
  // Unexpected: still one JSON line and no stack trace, unless LOG_LEVEL asks for one.
  const message = err instanceof Error ? err.message : String(err);
  printJson(errorBody('internal_error', message));
  hint(`sigil cli: ${message}`);
  if (['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '') && err instanceof Error && err.stack) hint(err.stack);
  exit(1);
});
