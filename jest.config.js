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
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  // @noble/ed25519 ships ESM only; let swc turn it into CommonJS for jest.
  transformIgnorePatterns: ['/node_modules/(?!(@noble)/)'],
  moduleNameMapper: {
    '^@app/(core|crypto|event-store)$': '<rootDir>/libs/$1/src',
  },
  testTimeout: 60000,
  maxWorkers: 2,
};
