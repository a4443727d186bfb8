export * from './topics.js';
export * from './capture-message.js';
export { createKafka, createProducer, ensureTopics, kafkaReachability } from './client.js';
export { RenewingProducer, SendNotStartedError, type SendOptions } from './renewing-producer.js';
export type { Kafka, Consumer, Admin, EachBatchPayload, KafkaMessage } from 'kafkajs';
export { PartitionCounts } from './partition-counts.js';
export { partitionOfKey } from './partitioner.js';
export { GroupCommit, mergeTopicMessages, sizeOfTopicMessages } from './group-commit.js';
export { consumerLag, messagesOnTopic, produceMetrics, type PartitionLag } from './metrics.js';
