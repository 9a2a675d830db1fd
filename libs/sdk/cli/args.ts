/** Command-line parsing for `sigil`: positionals and `--flag value` / `--flag=value` / boolean flags. */

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface Parsed {
  positionals: string[];
  flags: Record<string, string | true>;
}

/** Flags that take no value. */
const BOOLEAN_FLAGS = new Set(['json', 'help', 'version']);

export function parseArgs(argv: string[], allowed: readonly string[]): Parsed {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (!allowed.includes(name) && !BOOLEAN_FLAGS.has(name)) throw new UsageError(`unknown option --${name}`);
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    flags[name] = value;
  }
  return { positionals, flags };
}

export const flag = (p: Parsed, name: string): string | undefined => (typeof p.flags[name] === 'string' ? (p.flags[name] as string) : undefined);
