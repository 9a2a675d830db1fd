import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { documentText, fetchOpenApiDocument, repoRoot, sdkPaths, typesText } from './sdk-codegen';

/** `npm run sdk:generate`: writes libs/sdk/openapi.json and libs/sdk/src/generated/openapi.ts from the app's /openapi.json. */
async function main(): Promise<void> {
  const root = repoRoot();
  const paths = sdkPaths(root);
  const document = await fetchOpenApiDocument();
  mkdirSync(dirname(paths.types), { recursive: true });
  writeFileSync(paths.document, documentText(document));
  writeFileSync(paths.types, typesText(document, root));
  process.stderr.write(`sigil: wrote ${relative(root, paths.document)} and ${relative(root, paths.types)}\n`);
}

main().catch((err) => {
  process.stderr.write(`sigil: sdk:generate failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
