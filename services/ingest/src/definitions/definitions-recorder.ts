import { DefinitionType, definesProperties, detectPropertyType, fitsDefinition, isPropertyObject, isSkippedEventProperty, storableName } from '@tributary/ingestion';
import { DefinitionUpdates } from './definition-updates.js';

export interface DefinitionsRecorderOptions {
  /** Definitions remembered as written before the memory is emptied (and what follows is written again). */
  maxEntries?: number;
  /** How often an event's last_seen_at is moved forward at most: PostHog floors it to the hour. */
  lastSeenRefreshMs?: number;
  clock?: () => number;
}

interface SeenEvent {
  /** When its last_seen_at was last written, in ms. */
  writtenAt: number;
  /** Its event properties already written. */
  properties: Set<string>;
}

interface SeenProject {
  events: Map<string, SeenEvent>;
  /** Person and group property definitions already written, by `personKey` and `groupKey`. */
  others: Set<string>;
}

const personKey = (name: string) => `2\u0000${name}`;
const groupKey = (index: number, name: string) => `3\u0000${index}\u0000${name}`;

/**
 * What this process has already written to the definitions tables, so that an event whose name
 * and property keys are all known costs a few lookups and no write. Only definitions that were
 * written are remembered (`recorded`), so a chunk that is processed again, or whose write failed,
 * lists them again. The memory is bounded: past `maxEntries` it starts empty, which costs one
 * more idempotent upsert per definition seen again, and no bookkeeping per event.
 */
export class DefinitionsRecorder {
  private projects = new Map<number, SeenProject>();
  private entries = 0;
  private readonly maxEntries: number;
  private readonly lastSeenRefreshMs: number;
  private readonly clock: () => number;

  constructor(options: DefinitionsRecorderOptions = {}) {
    this.maxEntries = options.maxEntries ?? 200_000;
    this.lastSeenRefreshMs = options.lastSeenRefreshMs ?? 3_600_000;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * The definitions an event brings that are not written yet (or its last_seen_at, when due), null
   * when none. A `$groupidentify`'s group properties wait for its group type index (`observeGroup`).
   */
  observe(teamId: number, event: string, properties: Record<string, unknown>): DefinitionUpdates | null {
    if (!fitsDefinition(event)) return null;
    const name = storableName(event);
    const now = this.clock();
    const project = this.projects.get(teamId);
    const seen = project?.events.get(name);
    let updates: DefinitionUpdates | null = null;
    if (!seen || now - seen.writtenAt >= this.lastSeenRefreshMs) (updates ??= new DefinitionUpdates()).addEvent({ teamId, name, seenAt: new Date(now) });
    if (!definesProperties(event)) return updates;
    // A `$groupidentify` defines its group's properties only (see observeGroup), as PostHog's does.
    if (event === '$groupidentify') return updates;
    const nowS = now / 1000;
    for (const key in properties) {
      // Nearly every key was written already: that answer comes first.
      if (seen?.properties.has(key) || isSkippedEventProperty(key) || !fitsDefinition(key)) continue;
      const property = storableName(key);
      if (property !== key && seen?.properties.has(property)) continue;
      (updates ??= new DefinitionUpdates()).addProperty({ teamId, name: property, type: DefinitionType.event, groupTypeIndex: null, propertyType: detectPropertyType(key, properties[key], nowS), event: name });
    }
    // The person properties an event sets are defined by it too.
    updates = this.addOthers(teamId, properties.$set, null, nowS, updates);
    return this.addOthers(teamId, properties.$set_once, null, nowS, updates);
  }

  /** Adds to `updates` the group properties a `$groupidentify` sets that are not written yet. */
  observeGroup(teamId: number, groupTypeIndex: number, values: Record<string, unknown>, updates: DefinitionUpdates): void {
    this.addOthers(teamId, values, groupTypeIndex, this.clock() / 1000, updates);
  }

  /** Person properties (`groupTypeIndex` null) or a group type's not written yet, added to `updates` (made when needed). */
  private addOthers(teamId: number, values: unknown, groupTypeIndex: number | null, nowS: number, updates: DefinitionUpdates | null): DefinitionUpdates | null {
    if (!isPropertyObject(values)) return updates;
    const others = this.projects.get(teamId)?.others;
    for (const key in values) {
      if (!fitsDefinition(key)) continue;
      const property = storableName(key);
      if (others?.has(groupTypeIndex === null ? personKey(property) : groupKey(groupTypeIndex, property))) continue;
      (updates ??= new DefinitionUpdates()).addProperty({
        teamId,
        name: property,
        type: groupTypeIndex === null ? DefinitionType.person : DefinitionType.group,
        groupTypeIndex,
        propertyType: detectPropertyType(key, values[key], nowS),
        event: null,
      });
    }
    return updates;
  }

  /** Remembers definitions Postgres now holds. */
  recorded(updates: DefinitionUpdates): void {
    for (const { teamId, name, seenAt } of updates.events) this.seenEvent(teamId, name).writtenAt = seenAt.getTime();
    for (const p of updates.properties) {
      if (p.event !== null) {
        const properties = this.seenEvent(p.teamId, p.event).properties;
        if (!properties.has(p.name)) {
          properties.add(p.name);
          this.entries += 1;
        }
      } else {
        const others = this.project(p.teamId).others;
        const key = p.type === DefinitionType.group ? groupKey(p.groupTypeIndex!, p.name) : personKey(p.name);
        if (!others.has(key)) {
          others.add(key);
          this.entries += 1;
        }
      }
    }
    if (this.entries > this.maxEntries) this.forget();
  }

  private forget(): void {
    this.projects = new Map();
    this.entries = 0;
  }

  private project(teamId: number): SeenProject {
    let project = this.projects.get(teamId);
    if (!project) this.projects.set(teamId, (project = { events: new Map(), others: new Set() }));
    return project;
  }

  private seenEvent(teamId: number, name: string): SeenEvent {
    const events = this.project(teamId).events;
    let seen = events.get(name);
    if (!seen) {
      events.set(name, (seen = { writtenAt: 0, properties: new Set() }));
      this.entries += 1;
    }
    return seen;
  }
}
