import { createHash, randomUUID } from 'node:crypto';
import { testConfig } from '@tributary/test-support';
import { DestinationGuard } from '../destination-address/destination-guard.js';
import { destinationPolicy } from '../destination-address/stack-destinations.js';
import type { ExportModel, ExportPart, ExportRecord } from './export-part.js';

/** Parts and records for destination tests, shaped as the run executor reads them from ClickHouse. */

/** The tests' destinations are servers on this machine: loopback is allowed, the stack's own ports still refused. */
export const localGuard = new DestinationGuard(destinationPolicy(testConfig({ batchExportAllowedDestinations: ['127.0.0.0/8', '::1'] })));

export const WINDOW = { start: new Date('2024-03-05T06:00:00Z'), end: new Date('2024-03-05T07:00:00Z'), by: 'inserted_at' as const };

/** An event record; `padding` adds that many hex characters of incompressible text to its properties. */
export function eventRecord(i: number, overrides: ExportRecord = {}, padding = 0): ExportRecord {
  const noise = Array.from({ length: Math.ceil(padding / 64) }, (_, n) => createHash('sha256').update(`${i}:${n}`).digest('hex')).join('').slice(0, padding);
  return {
    uuid: `018e1a2b-0000-7000-8000-${String(i).padStart(12, '0')}`,
    event: i % 3 === 0 ? 'signed_up' : '$pageview',
    properties: { $current_url: `https://example.com/${i}`, $ip: '10.0.0.1', $set: { plan: 'pro' }, n: i, ...(noise ? { noise } : {}) },
    distinct_id: `user-${i % 5}`,
    team_id: 7,
    timestamp: new Date(Date.UTC(2024, 2, 5, 5, 59, i % 60)).toISOString(),
    created_at: '2024-03-05T06:00:01.000Z',
    elements_chain: i % 3 === 1 ? 'a:href="/x"nth-child="1"' : '',
    person_id: '018e1a2b-0000-7000-8000-00000000beef',
    person_properties: { email: `u${i % 5}@example.com` },
    inserted_at: '2024-03-05T06:30:00.000Z',
    ...overrides,
  };
}

export function personRecord(distinctId: string, versions: { person: number; mapping: number }, properties: Record<string, unknown> = {}): ExportRecord {
  return {
    team_id: 7,
    distinct_id: distinctId,
    person_id: '018e1a2b-0000-7000-8000-00000000beef',
    properties,
    person_version: versions.person,
    person_distinct_id_version: versions.mapping,
    created_at: '2024-01-01T00:00:00.000Z',
    is_deleted: false,
    inserted_at: '2024-03-05T06:30:00.000Z',
  };
}

export function exportPart(records: ExportRecord[], index = 0, model: ExportModel = 'events'): ExportPart {
  return { exportId: randomUUID(), runId: randomUUID(), teamId: 7, model, window: WINDOW, index, records };
}
