#!/usr/bin/env node
// `npx sigil …` from the repository: runs the SDK's `sigil` command (libs/sdk/dist/cli.cjs),
// building it first when it is missing or older than its sources.
'use strict';
const { join } = require('node:path');
const { ensureSdkBuilt, SDK_DIST } = require('./sdk-build');

try {
  ensureSdkBuilt(['cli']);
} catch (err) {
  process.stderr.write(`sigil: cannot build the CLI: ${err.message}\n`);
  process.exit(2);
}
require(join(SDK_DIST, 'cli.cjs'));
