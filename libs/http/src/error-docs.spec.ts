import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ERROR_CATALOG, isRetryableError } from './error-catalog';
import { ERROR_TABLE_END, ERROR_TABLE_START, errorTableMarkdown, withErrorTable } from './error-docs';

const root = join(__dirname, '..', '..', '..');

/** Every .ts source under `dir` (no specs, no build output, no generated code). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', 'dist', 'generated'].includes(e.name) ? [] : sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `new DomainError('code'` and `new AppError('code'` (the code may be on the next line). */
const THROWN = /new (?:DomainError|AppError)\(\s*'([a-z0-9_]+)'/g;

describe('the error catalog and docs/errors.md', () => {
  it('docs/errors.md holds the table generated from the catalog (run `npm run docs:errors`)', () => {
    const doc = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
    expect(doc).toContain(`${ERROR_TABLE_START}\n${errorTableMarkdown()}\n${ERROR_TABLE_END}`);
    expect(withErrorTable(doc)).toBe(doc);
  });

  it('lists every code thrown as new DomainError(…)/new AppError(…) in libs/ and apps/', () => {
    const thrown = new Map<string, string>();
    for (const file of [...sources(join(root, 'libs')), ...sources(join(root, 'apps'))]) {
      for (const m of readFileSync(file, 'utf8').matchAll(THROWN)) thrown.set(m[1], relative(root, file));
    }
    expect(thrown.size).toBeGreaterThan(20);
    const missing = [...thrown].filter(([code]) => !(code in ERROR_CATALOG)).map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });

  it('rewrites a stale table between the markers and refuses a document without them', () => {
    const stale = `# Error codes\n\n${ERROR_TABLE_START}\n| status | code | when |\n|---|---|---|\n| 400 | \`old\` | gone |\n${ERROR_TABLE_END}\n\nafter\n`;
    const fresh = withErrorTable(stale);
    expect(fresh).toBe(`# Error codes\n\n${ERROR_TABLE_START}\n${errorTableMarkdown()}\n${ERROR_TABLE_END}\n\nafter\n`);
    expect(fresh).toContain('| 409 | `idempotency_request_in_progress` | yes |');
    expect(fresh).toContain('| 422 | `idempotency_key_reused` | no |');
    expect(() => withErrorTable('# Error codes\n')).toThrow(/needs the lines/);
  });

  it('flags as retryable exactly the limits, the unavailable dependencies, the transient conflicts and a failed settlement', () => {
    const retryable = Object.entries(ERROR_CATALOG)
      .filter(([, e]) => e.retryable)
      .map(([code]) => code)
      .sort();
    expect(retryable).toEqual([
      'concurrent_modification',
      'execution_in_progress',
      'idempotency_request_in_progress',
      'not_ready',
      'rate_limited',
      'rate_limiter_unavailable',
      'settlement_failed',
      'webhook_delivery_pending',
    ]);
    // Every 429 and 503 of the catalog is retryable (the SDK's backoff retries only those, and only when the flag is true).
    for (const e of Object.values(ERROR_CATALOG)) if (e.status === 429 || e.status === 503) expect(e.retryable).toBe(true);
    // Codes outside the catalog (Fastify's and Nest's own statuses): 429 and 503 only.
    expect([isRetryableError('service_unavailable', 503), isRetryableError('request_timeout', 408), isRetryableError('method_not_allowed', 405)]).toEqual([true, false, false]);
  });
});
