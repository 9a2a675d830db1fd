import { readFileSync } from 'node:fs';
import { DOCUMENT_BASE_URL, documentText, sdkPaths, typesText } from '../apps/api/src/openapi/sdk-codegen';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The SDK's types are generated from the service's own /openapi.json (`npm run sdk:generate`).
 * This regenerates both files from the running app and fails when the committed ones are stale.
 */
describe('SDK types generated from /openapi.json', () => {
  let t: TestApp;
  let document: unknown;
  const paths = sdkPaths();

  beforeAll(async () => {
    t = await startTestApp({ BASE_URL: DOCUMENT_BASE_URL });
    const res = await t.app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    document = JSON.parse(res.body);
  });
  afterAll(async () => {
    await t?.close();
  });

  const stale = 'stale: run `npm run sdk:generate` and commit libs/sdk/openapi.json and libs/sdk/src/generated/openapi.ts';

  it('libs/sdk/openapi.json is the document the service serves', () => {
    const committed = readFileSync(paths.document, 'utf8');
    expect({ file: 'libs/sdk/openapi.json', upToDate: committed === documentText(document) }).toEqual({ file: 'libs/sdk/openapi.json', upToDate: true });
  });

  it('libs/sdk/src/generated/openapi.ts is what openapi-typescript makes of it', () => {
    const committed = readFileSync(paths.types, 'utf8');
    const fresh = typesText(document);
    if (committed !== fresh) throw new Error(`libs/sdk/src/generated/openapi.ts is ${stale}`);
  });

  it('names a schema for the request and the response of every operation the SDK client covers', () => {
    const doc = document as { paths: Record<string, Record<string, { operationId: string; requestBody?: unknown; responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>> };
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (path === '/healthz' || path === '/readyz' || path.startsWith('/verify/')) continue;
        const ok = Object.entries(op.responses).find(([status]) => /^2/.test(status));
        if (!ok) missing.push(`${method} ${path}: no success response`);
        else if (ok[0] !== '204' && !Object.values(ok[1].content ?? {}).some((c) => c.schema)) missing.push(`${method} ${path}: no response schema`);
        if (/[A-Z]/.test(op.operationId[0]) || op.operationId.includes('_')) missing.push(`${method} ${path}: no operationId`);
      }
    }
    expect(missing).toEqual([]);
  });
});
