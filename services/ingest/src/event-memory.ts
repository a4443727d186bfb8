import type { KafkaMessage } from 'kafkajs';
import { EncodedJsonFields, RowHeads, WRITTEN_EVENT_HEAD_COLUMNS, type EventRowOut } from '@tributary/clickhouse';
import type { ChunkEvent, GroupIdentify } from '@tributary/ingestion';
import type { RowBuffer } from './clickhouse-rows.js';
import type { DefinitionUpdates } from './definitions/definition-updates.js';

/**
 * How a chunk's events are held between the steps of EventProcessor, shaped for V8's garbage
 * collector. A chunk's events wait through the Postgres round trips of their persons; whatever
 * an event keeps alive that long outlives the young generation's collections and is copied into
 * the old one and marked there (a fifth of ingest's time once went to garbage collection). So
 * what the later steps need is encoded or reduced as soon as it is known, and the rest let go
 * while it is still young.
 */

export interface Warning {
  type: string;
  details: Record<string, unknown>;
}

/** The first columns of a chunk's event rows, encoded as soon as each event is read (see RowHeads). */
export type EventHeads = RowHeads<EventRowOut, (typeof WRITTEN_EVENT_HEAD_COLUMNS)[number]>;

/**
 * An event ready for its person: parsed, its project known, its timestamp computed. It keeps
 * only what the later steps read of the parsed event, the columns of its row that need no
 * person already encoded: parsed events kept through the persons' round trips were copied into
 * the old generation. Let go after `prepare`, they die young.
 */
export interface Prepared {
  message: KafkaMessage;
  uuid: string;
  teamId: number;
  timestamp: Date;
  /** When ingest took the chunk, as ClickHouse reads it. */
  processedAt: string;
  /** NO_WARNINGS for nearly every event (an array of its own each was kept as long as its chunk); replaced, never added to. */
  warnings: readonly Warning[];
  /** Where the first columns of its event row are (see RowHeads). */
  head: number;
  /** The `$groups` property, read for the group columns once the chunk's group types are known. */
  groups: unknown;
  /** What applying the event to its person reads. */
  person: ChunkEvent;
  /** Null for any event but `$groupidentify`. */
  groupIdentify: GroupIdentify | null;
  /** The definitions it brings that this process has not written yet; null for nearly every event. */
  definitions: DefinitionUpdates | null;
}

/**
 * What an event's row needs of its person, kept from when the event is applied until the row is
 * completed: the properties already encoded, by their number in the chunk's EncodedJsonFields.
 * Nearly every event leaves its person with properties of its own (device and page properties
 * are set each time), and outcomes that held those objects kept one per event alive through the
 * round trips.
 */
export interface RecordedPerson {
  uuid: string;
  propertiesField: number;
  createdAt: Date;
}

/** The encoded parts of one chunk's rows, given back to their pools once the chunk is done. */
export interface ChunkMemory {
  heads: EventHeads;
  personFields: EncodedJsonFields;
}

/** Runs `work` with a chunk's encoded parts, released whatever it ends with. */
export async function withChunkMemory<T>(rows: RowBuffer, work: (memory: ChunkMemory) => Promise<T>): Promise<T> {
  const memory: ChunkMemory = { heads: new RowHeads(rows.events, WRITTEN_EVENT_HEAD_COLUMNS), personFields: new EncodedJsonFields() };
  try {
    return await work(memory);
  } finally {
    memory.heads.release();
    memory.personFields.release();
  }
}

const copy = (bytes: Buffer | null) => (bytes === null ? null : Buffer.from(bytes));

/**
 * Gives the message bytes of its own. kafkajs hands out slices of the whole fetch response, so
 * one queued message would keep every partition's share of that response in memory for as long
 * as it waits; copied, a queue holds only its own messages. kafkajs is done with the message
 * once it is handed over.
 */
export function detach(message: KafkaMessage): KafkaMessage {
  message.key = copy(message.key);
  message.value = copy(message.value);
  if (message.headers) {
    for (const [name, value] of Object.entries(message.headers)) {
      if (Buffer.isBuffer(value)) message.headers[name] = Buffer.from(value);
      else if (Array.isArray(value)) message.headers[name] = value.map((v) => (Buffer.isBuffer(v) ? Buffer.from(v) : v));
    }
  }
  return message;
}

/** Remembers a function's answer per object, for as long as the object lives. */
export class Memo<K extends object, V> {
  private readonly answers = new WeakMap<K, V>();

  of(key: K, compute: (key: K) => V): V {
    let value = this.answers.get(key);
    if (value === undefined) {
      value = compute(key);
      this.answers.set(key, value);
    }
    return value;
  }
}
