import { v7 as uuidv7 } from 'uuid';
import { encodeCaptureMessage, messageKey, type CaptureMessage, type RenewingProducer } from '@tributary/kafka';

/**
 * Person property changes made through the API travel as events, like an SDK's `$set`: keyed by
 * token and distinct id, they land on the same partition as that person's other events, so ingest
 * applies them in order with everything the SDKs send.
 */
export class PersonEventPublisher {
  constructor(
    private readonly producer: Pick<RenewingProducer, 'send'>,
    private readonly topic: string,
    private readonly timeoutMs: number,
  ) {}

  async publish(token: string, distinctId: string, event: string, properties: Record<string, unknown>): Promise<string> {
    const now = new Date().toISOString();
    const message: CaptureMessage = {
      uuid: uuidv7(),
      distinct_id: distinctId,
      ip: null,
      data: JSON.stringify({ event, distinct_id: distinctId, properties, timestamp: now }),
      now,
      sent_at: null,
      token,
      historical_migration: false,
    };
    // The deadline bounds the wait behind earlier sends too, which while Kafka is away each take kafkajs's retries.
    await this.producer.send(
      { topic: this.topic, acks: -1, timeout: this.timeoutMs, messages: [{ key: messageKey(token, distinctId), value: encodeCaptureMessage(message) }] },
      { deadlineMs: this.timeoutMs },
    );
    return message.uuid;
  }
}
