import { parseArgs, ParseArgsConfig } from 'node:util';
import { AccessService, CreateApiKeyCommand, CreateOrganizationCommand, KeyMode, parseScopes, RevokeApiKeyCommand, Scope, SCOPES } from '@app/access';
import { AppError } from '@app/core';
import { InviteUserCommand, IssuedSignInLink, ROLES, signInUrl } from '@app/console';
import { ImportLegacyCertificatesCommand, LegacyCertificate, LegacyImportReport, parseLegacyFile, RevokeSigningKeyCommand, RotateSigningKeyCommand, SigningKeyStore } from '@app/notary';

/**
 * The admin CLI's commands, without any I/O of its own: `parseCommand` turns argv into a
 * command (or a CliError, exit 2, before anything touches the database) and `runCommand`
 * executes it, dispatching the same commands as the server (reads from the access queries),
 * returning the one JSON object to print.
 */

/** An expected failure: printed as `{"ok":false,"error":code,"message":...}`, never with a stack. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** 2: the command line is wrong (nothing was done); 1: the command failed. */
    readonly exitCode: 1 | 2,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

const usageError = (message: string, details?: unknown) => new CliError('invalid_arguments', message, 2, details);

export type ParsedCommand =
  | { command: 'help' }
  | { command: 'orgs:create'; name: string }
  | { command: 'keys:create'; orgId: string; scopes: Scope[]; mode: KeyMode; name: string | null; owner: string | null }
  | { command: 'keys:list'; orgId: string }
  | { command: 'keys:revoke'; keyId: string; reason: string | null }
  | { command: 'users:invite'; orgId: string; email: string; name: string; role: string }
  | { command: 'signing-keys:list' }
  | { command: 'signing-keys:rotate' }
  | { command: 'signing-keys:revoke'; keyId: string }
  | { command: 'certificates:import-legacy'; file: string; orgId: string };

/** What runCommand executes: the import carries the certificates main read from its file. */
export type RunnableCommand =
  | Exclude<ParsedCommand, { command: 'help' } | { command: 'certificates:import-legacy' }>
  | (Extract<ParsedCommand, { command: 'certificates:import-legacy' }> & { certificates: LegacyCertificate[] });

type Options = NonNullable<ParseArgsConfig['options']>;

interface CommandSpec {
  synopsis: string;
  summary: string;
  options: Options;
  positionals: string[];
  build(values: Record<string, string | boolean | undefined>, positionals: string[]): ParsedCommand;
}

const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);

function required(values: Record<string, string | boolean | undefined>, option: string): string {
  const v = str(values[option])?.trim();
  if (!v) throw usageError(`--${option} is required`);
  return v;
}

const COMMANDS: Record<string, CommandSpec> = {
  'orgs:create': {
    synopsis: 'orgs:create <name>',
    summary: 'create an organization (kind "standard")',
    options: {},
    positionals: ['name'],
    build: (_v, [name]) => ({ command: 'orgs:create', name }),
  },
  'keys:create': {
    synopsis: 'keys:create --org <org_id> --scopes <a,b,...> --mode <test|live> [--name <name>] [--owner <who holds it>]',
    summary: 'create an API key; the secret is printed once, here only',
    options: { org: { type: 'string' }, scopes: { type: 'string' }, mode: { type: 'string' }, name: { type: 'string' }, owner: { type: 'string' } },
    positionals: [],
    build(values) {
      const orgId = required(values, 'org');
      const { scopes, unknown } = parseScopes(required(values, 'scopes'));
      if (unknown.length) {
        throw usageError(`unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; valid scopes: ${SCOPES.join(', ')}`, {
          unknown_scopes: unknown,
          valid_scopes: SCOPES,
        });
      }
      if (scopes.length === 0) throw usageError(`--scopes needs at least one scope; valid scopes: ${SCOPES.join(', ')}`, { valid_scopes: SCOPES });
      const mode = required(values, 'mode');
      if (mode !== 'test' && mode !== 'live') throw usageError(`--mode must be test or live, not "${mode}"`);
      return { command: 'keys:create', orgId, scopes, mode, name: str(values.name)?.trim() || null, owner: str(values.owner)?.trim() || null };
    },
  },
  'keys:list': {
    synopsis: 'keys:list --org <org_id>',
    summary: "list an organization's keys (never their secrets or hashes)",
    options: { org: { type: 'string' } },
    positionals: [],
    build: (values) => ({ command: 'keys:list', orgId: required(values, 'org') }),
  },
  'keys:revoke': {
    synopsis: 'keys:revoke <key_id> [--reason <text>]',
    summary: 'revoke a key at once (revoking twice changes nothing)',
    options: { reason: { type: 'string' } },
    positionals: ['key_id'],
    build: (values, [keyId]) => ({ command: 'keys:revoke', keyId, reason: str(values.reason) ?? null }),
  },
  'users:invite': {
    synopsis: 'users:invite --org <org_id> --email <email> --name <display name> [--role owner|admin|reviewer|viewer]',
    summary: 'invite a person to the console (default role: owner, e.g. the first one); prints their one-time sign-in link',
    options: { org: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' } },
    positionals: [],
    build(values) {
      const role = str(values.role)?.trim() || 'owner';
      if (!(ROLES as readonly string[]).includes(role)) throw usageError(`--role must be one of ${ROLES.join(', ')}, not "${role}"`);
      return { command: 'users:invite', orgId: required(values, 'org'), email: required(values, 'email'), name: required(values, 'name'), role };
    },
  },
  'signing-keys:list': {
    synopsis: 'signing-keys list',
    summary: "the authority's signing keys and their status (public parts only)",
    options: {},
    positionals: [],
    build: () => ({ command: 'signing-keys:list' }),
  },
  'signing-keys:rotate': {
    synopsis: 'signing-keys rotate',
    summary: 'make a new active signing key; the old one is retired and still verifies what it signed',
    options: {},
    positionals: [],
    build: () => ({ command: 'signing-keys:rotate' }),
  },
  'signing-keys:revoke': {
    synopsis: 'signing-keys revoke <key_id>',
    summary: 'revoke a signing key (a compromise); revoking the active key activates a new one',
    options: {},
    positionals: ['key_id'],
    build: (_v, [keyId]) => ({ command: 'signing-keys:revoke', keyId }),
  },
  'certificates:import-legacy': {
    synopsis: 'certificates import-legacy <file> --org <org_id>',
    summary:
      'import legacy cert.v2 certificates (a JSON file: one signed manifest or an array; see README) into an\n' +
      '      organization; their public keys become verify-only keys. All or nothing; importing again adds nothing',
    options: { org: { type: 'string' } },
    positionals: ['file'],
    build: (values, [file]) => ({ command: 'certificates:import-legacy', file, orgId: required(values, 'org') }),
  },
};

export const USAGE = [
  'usage: npm run cli -- <command> [options]',
  '',
  'commands:',
  ...Object.values(COMMANDS).map((c) => `  ${c.synopsis}\n      ${c.summary}`),
  '  help',
  '      this text',
  '',
  `scopes: ${SCOPES.join(', ')}`,
  '',
  'Each command prints one JSON object as the last line of stdout. Errors print',
  '{"ok":false,"error":"<code>","message":"..."} and exit 1 (2 when the command line is wrong).',
  'It uses DATABASE_URL when set, else the embedded store in DATA_DIR (./data); while `npm start`',
  'runs on that directory, the command runs inside that server (its operator channel, a Unix',
  'socket in DATA_DIR/operator/ that only its user can open).',
].join('\n');

export function parseCommand(argv: string[]): ParsedCommand {
  // `signing-keys <action>` and `certificates <action>` are written with a space, as the README shows them.
  const grouped = (argv[0] === 'signing-keys' || argv[0] === 'certificates') && argv[1] && !argv[1].startsWith('-');
  const joined = grouped ? [`${argv[0]}:${argv[1]}`, ...argv.slice(2)] : argv;
  const [name, ...rest] = joined;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') return { command: 'help' };
  const spec = COMMANDS[name];
  if (!spec) throw new CliError('unknown_command', `unknown command "${name}"; commands: ${Object.keys(COMMANDS).join(', ')}, help`, 2);

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...spec.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    // parseArgs' own messages name the offending option (unknown, missing value, ...).
    throw usageError(`${name}: ${(err as Error).message}`);
  }
  if (parsed.values.help) return { command: 'help' };
  const positionals = parsed.positionals;
  if (positionals.length < spec.positionals.length) {
    throw usageError(`${name}: missing <${spec.positionals[positionals.length]}>; usage: ${spec.synopsis}`);
  }
  if (positionals.length > spec.positionals.length) {
    const extra = positionals.slice(spec.positionals.length).join(' ');
    throw usageError(`${name}: unexpected argument "${extra}" (quote a value with spaces); usage: ${spec.synopsis}`);
  }
  return spec.build(parsed.values as Record<string, string | boolean | undefined>, positionals);
}

/**
 * The certificates of a legacy import file, given a way to read it (main's I/O). An unreadable
 * or malformed file is a usage error (exit 2): nothing was done.
 */
export function legacyCertificatesFrom(file: string, read: () => string): LegacyCertificate[] {
  let text: string;
  try {
    text = read();
  } catch (err) {
    throw new CliError('invalid_legacy_file', `cannot read ${file}: ${(err as Error).message}`, 2);
  }
  const parsed = parseLegacyFile(text);
  if (parsed.ok) return parsed.certificates;
  const [first] = parsed.problems;
  const where = first.index === null ? '' : ` certificate ${first.index}${first.field ? `, ${first.field}` : ''}:`;
  throw new CliError('invalid_legacy_file', `${file}: ${parsed.problems.length} problem(s); the first:${where} ${first.message}`, 2, { problems: parsed.problems });
}

/** Runs a use case's command through its handler (the CLI's command bus). */
export type Dispatch = <R>(command: object) => Promise<R>;

export interface CliServices {
  /** The access queries (organizations, key lists). */
  access: AccessService;
  /** Where the server is reached (sign-in links point there). */
  baseUrl: string;
  dispatch: Dispatch;
  /**
   * Opened only by the signing-key commands and the legacy import (they need KEY_ENCRYPTION_KEY):
   * the ring, its first key created if there is none, checked against the key-encryption key.
   */
  signingKeys(): Promise<SigningKeyStore>;
}

export async function runCommand(cmd: RunnableCommand, services: CliServices): Promise<object> {
  const { access } = services;
  switch (cmd.command) {
    case 'certificates:import-legacy': {
      if (!(await access.getOrganization(cmd.orgId))) throw new AppError('not_found', `organization ${cmd.orgId} not found`, 404);
      await services.signingKeys();
      return { file: cmd.file, ...(await services.dispatch<LegacyImportReport>(new ImportLegacyCertificatesCommand(cmd.orgId, cmd.certificates))) };
    }
    case 'signing-keys:list':
      return { keys: (await services.signingKeys()).current.list() };
    case 'signing-keys:rotate':
      await services.signingKeys();
      return services.dispatch<object>(new RotateSigningKeyCommand());
    case 'signing-keys:revoke':
      // An unknown key is refused with not_found by the ring's decision.
      await services.signingKeys();
      return services.dispatch<object>(new RevokeSigningKeyCommand(cmd.keyId));
    case 'orgs:create':
      return services.dispatch<object>(new CreateOrganizationCommand(cmd.name));
    case 'keys:create': {
      const created = await services.dispatch<object>(new CreateApiKeyCommand(cmd.orgId, { scopes: cmd.scopes, mode: cmd.mode, name: cmd.name, owner: cmd.owner, createdBy: 'operator' }));
      return { ...created, name: cmd.name };
    }
    case 'keys:list': {
      if (!(await access.getOrganization(cmd.orgId))) throw new AppError('not_found', `organization ${cmd.orgId} not found`, 404);
      return { org_id: cmd.orgId, keys: await access.listApiKeys(cmd.orgId) };
    }
    case 'keys:revoke':
      return services.dispatch<object>(new RevokeApiKeyCommand(cmd.keyId, { reason: cmd.reason, revokedBy: 'operator' }));
    case 'users:invite': {
      if (!(await access.getOrganization(cmd.orgId))) throw new AppError('not_found', `organization ${cmd.orgId} not found`, 404);
      const link = await services.dispatch<IssuedSignInLink>(new InviteUserCommand(cmd.orgId, { email: cmd.email, displayName: cmd.name, role: cmd.role }, { kind: 'operator' }));
      return { link_id: link.link_id, url: signInUrl(services.baseUrl, link.token), expires_at: link.expires_at, user: link.user };
    }
  }
}
