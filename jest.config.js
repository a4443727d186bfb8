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
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['\\.integration\\.test\\.ts$', '/node_modules/'] },
    { ...common, displayName: 'integration', testMatch: ['**/*.integration.test.ts'], testPathIgnorePatterns: ['/node_modules/'] },
  ],
};
