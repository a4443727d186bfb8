export * from './topics.js';
export * from './capture-message.js';
export { createKafka, createProducer, ensureTopics, kafkaReachability } from './client.js';
export type { Kafka, Producer, Consumer, Admin, EachBatchPayload, KafkaMessage } from 'kafkajs';
export { GroupCommit, mergeTopicMessages, sizeOfTopicMessages } from './group-commit.js';
export { consumerLag, messagesOnTopic, produceMetrics, type PartitionLag } from './metrics.js';
