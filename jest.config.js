// One jest run covers unit specs beside the code and e2e/system specs in test/.
const swc = JSON.parse(require('fs').readFileSync(__dirname + '/.swcrc', 'utf8'));
delete swc.exclude;
delete swc.$schema;
swc.jsc.baseUrl = __dirname;
swc.swcrc = false;

module.exports = {
  testEnvironment: 'node',
  rootDir: __dirname,
  testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  // Suites for the postgres adapter need a server: they run in the DATABASE_URL pass of
  // `npm test` (.ci/run runs both passes); the embedded pass runs the same contract on PGlite.
  // Likewise `.redis.` suites (Redis-only code) run in the REDIS_URL pass.
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.DATABASE_URL ? [] : ['\\.postgres\\.']), ...(process.env.REDIS_URL ? [] : ['\\.redis\\.'])],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  // Some packages ship ESM only (@noble/ed25519, content-disposition under @fastify/static);
  // jest's module system cannot require ESM, so swc turns them into CommonJS.
  transformIgnorePatterns: ['^(?!.*/node_modules/(@noble|content-disposition)/).*/node_modules/'],
  moduleNameMapper: {
    '^@app/([a-z-]+)$': '<rootDir>/libs/$1/src',
  },
  // The browser specs need a Chromium: found or installed before any test runs (issue: fresh machines).
  globalSetup: '<rootDir>/test/support/global-setup.js',
  testTimeout: 60000,
  maxWorkers: 2,
};
