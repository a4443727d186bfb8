export * from './deletion-batch.js';
export * from './schedule.js';
export * from './event-retention.js';
export * from './override-squash.js';
