import { SCOPES } from '@app/access';
import { CliError, legacyCertificatesFrom, parseCommand } from './cli';
import { legacyManifest, legacySigner } from '../../../test/support/legacy-certificates';

const usage = (argv: string[]): CliError => {
  try {
    parseCommand(argv);
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error(`parsed: ${argv.join(' ')}`);
};

describe('cli parseCommand', () => {
  it('parses each command', () => {
    expect(parseCommand(['orgs:create', 'Acme Corp'])).toEqual({ command: 'orgs:create', name: 'Acme Corp' });
    expect(parseCommand(['keys:create', '--org', 'org_1', '--scopes', 'payments:write, receipts:read,payments:write', '--mode', 'live', '--name', 'ci'])).toEqual({
      command: 'keys:create',
      orgId: 'org_1',
      scopes: ['payments:write', 'receipts:read'],
      mode: 'live',
      name: 'ci',
      owner: null,
    });
    expect(parseCommand(['keys:create', '--org=org_1', '--scopes=approvals:manage', '--mode=test'])).toMatchObject({ name: null, owner: null, mode: 'test' });
    expect(parseCommand(['keys:create', '--org=org_1', '--scopes=approvals:manage', '--mode=test', '--owner', ' Dana (finance) '])).toMatchObject({ owner: 'Dana (finance)' });
    expect(parseCommand(['keys:list', '--org', 'org_1'])).toEqual({ command: 'keys:list', orgId: 'org_1' });
    expect(parseCommand(['keys:revoke', 'key_1', '--reason', 'leaked'])).toEqual({ command: 'keys:revoke', keyId: 'key_1', reason: 'leaked' });
    expect(parseCommand(['users:invite', '--org', 'org_1', '--email', 'a@example.com', '--name', 'Ada'])).toEqual({ command: 'users:invite', orgId: 'org_1', email: 'a@example.com', name: 'Ada', role: 'owner' });
    expect(parseCommand(['users:invite', '--org', 'org_1', '--email', 'a@example.com', '--name', 'Ada', '--role', 'viewer'])).toMatchObject({ role: 'viewer' });
    expect(usage(['users:invite', '--org', 'org_1', '--email', 'a@example.com', '--name', 'Ada', '--role', 'root'])).toMatchObject({ code: 'invalid_arguments', exitCode: 2 });
    expect(usage(['users:invite', '--org', 'org_1', '--name', 'Ada'])).toMatchObject({ code: 'invalid_arguments', exitCode: 2 });
  });

  it('treats no command, help, --help and -h as a request for the usage', () => {
    for (const argv of [[], ['help'], ['--help'], ['keys:create', '-h']]) expect(parseCommand(argv)).toEqual({ command: 'help' });
  });

  it('refuses bad command lines with exit code 2', () => {
    expect(usage(['keys:rotate'])).toMatchObject({ code: 'unknown_command', exitCode: 2 });
    const scopes = usage(['keys:create', '--org', 'o', '--scopes', 'payments:write,nope,zap', '--mode', 'test']);
    expect(scopes).toMatchObject({ code: 'invalid_arguments', exitCode: 2, details: { unknown_scopes: ['nope', 'zap'], valid_scopes: SCOPES } });
    expect(scopes.message).toContain(SCOPES.join(', '));
    expect(usage(['keys:create', '--org', 'o', '--scopes', ' , ', '--mode', 'test']).message).toMatch(/at least one scope/);
    expect(usage(['keys:create', '--org', 'o', '--scopes', 'payments:read', '--mode', 'sandbox']).message).toMatch(/--mode must be test or live/);
    expect(usage(['keys:create', '--org', 'o', '--scopes', 'payments:read']).message).toMatch(/--mode is required/);
    expect(usage(['keys:list']).message).toMatch(/--org is required/);
    expect(usage(['keys:list', '--org']).message).toMatch(/--org/);
    expect(usage(['keys:list', '--org', 'o', '--all']).message).toMatch(/--all/);
    expect(usage(['orgs:create']).message).toMatch(/missing <name>/);
    expect(usage(['orgs:create', 'Acme', 'Corp']).message).toMatch(/unexpected argument "Corp"/);
    expect(usage(['keys:revoke']).message).toMatch(/missing <key_id>/);
  });

  it('parses certificates import-legacy, written with a space', () => {
    expect(parseCommand(['certificates', 'import-legacy', 'old.json', '--org', 'org_1'])).toEqual({ command: 'certificates:import-legacy', file: 'old.json', orgId: 'org_1' });
    expect(usage(['certificates', 'import-legacy', 'old.json']).message).toMatch(/--org is required/);
    expect(usage(['certificates', 'import-legacy', '--org', 'org_1'])).toMatchObject({ code: 'invalid_arguments', exitCode: 2, message: expect.stringMatching(/missing <file>/) });
    expect(usage(['certificates', 'export'])).toMatchObject({ code: 'unknown_command', exitCode: 2 });
  });
});

describe('cli legacyCertificatesFrom', () => {
  const fileError = (read: () => string): CliError => {
    try {
      legacyCertificatesFrom('old.json', read);
    } catch (err) {
      if (err instanceof CliError) return err;
      throw err;
    }
    throw new Error('read');
  };

  it('returns the certificates of a good file', () => {
    const signer = legacySigner();
    const m = legacyManifest(signer);
    expect(legacyCertificatesFrom('old.json', () => JSON.stringify([m]))).toEqual([{ manifest: { schema_version: 'cert.v2', payload: m.payload, signature: m.signature }, public_key: signer.publicKey }]);
  });

  it('makes an unreadable or malformed file a usage error (exit 2), naming the problem', () => {
    const missing = fileError(() => {
      throw new Error('ENOENT: no such file or directory');
    });
    expect(missing).toMatchObject({ code: 'invalid_legacy_file', exitCode: 2, message: expect.stringMatching(/cannot read old\.json: ENOENT/) });
    expect(fileError(() => 'nope')).toMatchObject({ code: 'invalid_legacy_file', exitCode: 2, message: expect.stringMatching(/^old\.json: 1 problem\(s\); the first: not JSON/) });
    const bad = fileError(() => JSON.stringify([{ schema_version: 'cert.v2' }]));
    expect(bad).toMatchObject({ code: 'invalid_legacy_file', exitCode: 2, message: expect.stringContaining('certificate 0') });
    expect((bad.details as { problems: Array<{ field: string }> }).problems.map((p) => p.field)).toEqual(expect.arrayContaining(['payload', 'signature']));
  });
});
