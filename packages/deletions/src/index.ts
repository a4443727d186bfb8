export * from './deletion-batch.js';
export * from './schedule.js';
