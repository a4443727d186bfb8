/**
 * Two projects: `unit` runs pure tests (`*.test.ts`, no network); `integration` runs
 * `*.integration.test.ts` against the real stores that `make up` starts. Integration tests wait on
 * Kafka and ClickHouse round trips, so the timeout is generous; pure tests finish far below it.
 */
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services'],
};

export default {
  testTimeout: 90_000,
  // A suite that leaves a connection open after a failure must fail the run, not hang it until CI's time is up.
  forceExit: true,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['\\.integration\\.test\\.ts$', '/node_modules/'] },
    { ...common, displayName: 'integration', testMatch: ['**/*.integration.test.ts'], testPathIgnorePatterns: ['/node_modules/'] },
  ],
};
