// ESLint flat config: typescript-eslint's recommended rules, plus the module-boundary rule
// that libs are imported only through their index (`@app/<lib>`), never by deep path.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// The layering rules (issue 11): SQL lives only in the event store, repositories and migrations;
// the SQL adapter is named only inside libs/event-store (everything else injects the EventStore
// port); domain code imports no framework and no I/O. Files still to move onto aggregates and
// repositories are listed here, so the rules hold everywhere else today and the list can only shrink.
const NOT_YET_ON_REPOSITORIES = [
];
// SQL is written in upper case here, which keeps English sentences ("create an organization") out.
const SQL_TEXT = '/^\\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|CREATE|ALTER|DROP|TRUNCATE)\\s/';
// Dependencies are injected, never looked up (issue 11: nothing is found by ModuleRef).
const NO_MODULE_REF = { name: '@nestjs/core', importNames: ['ModuleRef'], message: 'Inject what you need (import the module that exports it); nothing is looked up by ModuleRef.' };
const LIB_INDEX_ONLY = [
  { group: ['@app/*/*'], message: 'Import a lib only through its index: @app/<lib>.' },
  { group: ['**/libs/*/src/*', '../libs/**', '../../libs/**', '../../../libs/**'], message: 'Import a lib only through @app/<lib>.' },
];

export default tseslint.config(
  { ignores: ['dist/**', 'libs/*/dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@app/*/*'], message: 'Import a lib only through its index: @app/<lib>.' },
            { group: ['**/libs/*/src/*', '../libs/**', '../../libs/**', '../../../libs/**'], message: 'Import a lib only through @app/<lib>.' },
          ],
        },
      ],
    },
  },
  {
    // SQL and the SQL adapter stay behind the port: outside libs/event-store only repositories
    // (`*.repository.ts`) and migrations hold SQL, and only they (and the modules wiring them)
    // name the read-model database. Specs and tests may look at tables directly.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['libs/event-store/**', '**/*.repository.ts', '**/*.migrations.ts', '**/*.spec.ts', 'libs/sdk/**', ...NOT_YET_ON_REPOSITORIES],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: `Literal[value=${SQL_TEXT}]`, message: 'SQL belongs in a repository (*.repository.ts), a migration or the event store.' },
        { selector: `TemplateElement[value.raw=${SQL_TEXT}]`, message: 'SQL belongs in a repository (*.repository.ts), a migration or the event store.' },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: LIB_INDEX_ONLY,
          paths: [
            {
              name: '@app/event-store',
              importNames: ['SqlEventStore', 'AppendFollowUp', 'ManyAppendFollowUp', 'SqlExecutor', 'PgDatabase', 'PgliteDatabase'],
              message: 'Inject the EventStore port; the SQL adapter is the event store lib\'s own.',
            },
            { name: '@app/event-store', importNames: ['SqlDatabase'], message: 'Only repositories (and the modules wiring them) touch read-model tables.' },
            NO_MODULE_REF,
          ],
        },
      ],
    },
  },
  {
    // Files stay short enough to read whole (generated code and test suites aside).
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/contract/**', 'libs/sdk/src/generated/**'],
    rules: { 'max-lines': ['error', { max: 300 }] },
  },
  {
    // The wiring modules construct repositories with the read-model database.
    files: ['apps/**/*.module.ts', 'libs/**/*.module.ts'],
    ignores: NOT_YET_ON_REPOSITORIES,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: LIB_INDEX_ONLY,
          paths: [{ name: '@app/event-store', importNames: ['SqlEventStore', 'AppendFollowUp', 'ManyAppendFollowUp', 'SqlExecutor'], message: 'Inject the EventStore port.' }, NO_MODULE_REF],
        },
      ],
    },
  },
  {
    // Domain code is plain TypeScript: no framework, no I/O, no store.
    files: ['libs/*/src/domain/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ...LIB_INDEX_ONLY,
            { group: ['@nestjs/*', 'pg', '@electric-sql/*', 'ioredis', 'bullmq', 'fastify', 'undici', 'node:http', 'node:https', 'node:dns', 'node:fs', 'node:child_process'], message: 'Domain code has no framework or I/O imports.' },
            // The shape of a stored event is data a domain may read; the store itself is not.
            { group: ['@app/event-store'], allowTypeImports: true, message: 'Domain code uses no store (types of events only).' },
            { group: ['@app/http', '@app/platform', '@app/idempotency'], message: 'Domain code depends on no transport lib.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
