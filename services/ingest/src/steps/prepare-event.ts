import type { KafkaMessage } from 'kafkajs';
import { formatDateTime } from '@tributary/clickhouse';
import type { TokenResolver } from '@tributary/control-plane';
import type { GeoIp } from '@tributary/geoip';
import {
  NO_WARNINGS,
  PERSON_EVENTS,
  addressOf,
  chunkEventOf,
  computeTimestamp,
  parseEvent,
  processesPersonProfile,
  readGroupIdentify,
  stripPersonUpdates,
  surveyWarning,
  type RawEvent,
  withGeoip,
} from '@tributary/ingestion';
import type { CaptureMessage } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import type { DefinitionsRecorder } from '../definitions/definitions-recorder.js';
import type { EventHeads, Prepared } from '../event-memory.js';

export interface PrepareEventDeps {
  tokens: Pick<TokenResolver, 'resolve'>;
  definitions: Pick<DefinitionsRecorder, 'observe'>;
  geoip: GeoIp;
  logger: Logger;
}

/** What becomes of a decoded event before its person: ready, dropped, or dead-lettered with a reason. */
export type PrepareResult = { kind: 'ok'; event: Prepared } | { kind: 'drop' } | { kind: 'dlq'; reason: string };

/** The event's `elements_chain`, or as `$elements_chain` in its properties. */
function elementsChainOf(event: RawEvent): string {
  if (typeof event.elements_chain === 'string') return event.elements_chain;
  return typeof event.properties.$elements_chain === 'string' ? event.properties.$elements_chain : '';
}

/**
 * Parsing, the project (resolved from the event's token) and the timestamp: everything about an
 * event that needs no person. The columns of its row known now are encoded into `heads` at once
 * (see event-memory.ts).
 */
export function createPrepareEventStep(deps: PrepareEventDeps) {
  return async (message: KafkaMessage, capture: CaptureMessage, processedAt: string, heads: EventHeads): Promise<PrepareResult> => {
    const parsed = parseEvent(capture);
    if (parsed.kind !== 'ok') return parsed.kind === 'dlq' ? { kind: 'dlq', reason: parsed.reason } : { kind: 'drop' };
    const project = await deps.tokens.resolve(capture.token);
    if (!project) {
      deps.logger.warn({ uuid: capture.uuid }, 'event for a project that no longer exists dropped');
      return { kind: 'drop' };
    }
    let warnings = NO_WARNINGS;
    const computed = computeTimestamp({
      timestamp: parsed.event.timestamp,
      offset: parsed.event.offset,
      sentAt: capture.sent_at ? new Date(capture.sent_at) : null,
      now: new Date(capture.now),
    });
    if (computed.warning) warnings = [computed.warning];
    const survey = surveyWarning(parsed.event);
    if (survey) warnings = [...warnings, survey];
    let event = withGeoip(parsed.event, deps.geoip.properties(addressOf(parsed.event, capture.ip)));
    if (!processesPersonProfile(event.properties)) {
      if (PERSON_EVENTS.has(event.event)) return { kind: 'drop' };
      event = stripPersonUpdates(event);
    }
    return {
      kind: 'ok',
      event: {
        message,
        uuid: capture.uuid,
        teamId: project.id,
        timestamp: computed.timestamp,
        processedAt,
        warnings,
        head: heads.add({
          uuid: capture.uuid,
          event: event.event,
          properties: JSON.stringify(event.properties),
          timestamp: formatDateTime(computed.timestamp),
          timestamp_ms: computed.timestamp.getUTCMilliseconds(),
          team_id: project.id,
          distinct_id: event.distinct_id,
          elements_chain: elementsChainOf(event),
          created_at: processedAt,
        }),
        groups: event.properties.$groups,
        person: chunkEventOf(event, computed.timestamp),
        groupIdentify: event.event === '$groupidentify' ? readGroupIdentify(event.properties) : null,
        definitions: deps.definitions.observe(project.id, event.event, event.properties),
      },
    };
  };
}
