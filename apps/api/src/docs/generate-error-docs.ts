import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { withErrorTable } from '@app/http';

/** docs/errors.md of the repository this file (or its build in dist/) lies in. */
function errorsDoc(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'docs/errors.md'))) return join(dir, 'docs/errors.md');
    if (dirname(dir) === dir) throw new Error(`no docs/errors.md above ${from}`);
  }
}

/** `npm run docs:errors`: rewrites docs/errors.md's table from the error catalog (libs/http/src/error-catalog.ts). */
function main(): void {
  const path = errorsDoc();
  const before = readFileSync(path, 'utf8');
  const after = withErrorTable(before);
  if (after !== before) writeFileSync(path, after);
  process.stderr.write(`sigil: docs/errors.md ${after === before ? 'is up to date' : 'rewritten from the error catalog'}\n`);
}

main();
