import { version } from '../package.json';
import { run } from './run';

/** The `sigil` command (bin of @sigil/sdk). Node-only, unlike the SDK it is built on. */
run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  version,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`sigil: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
