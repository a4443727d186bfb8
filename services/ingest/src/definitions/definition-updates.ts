import type { DefinitionType, PropertyType } from '@tributary/ingestion';

export interface EventDefinitionUpdate {
  teamId: number;
  name: string;
  seenAt: Date;
}

export interface PropertyDefinitionUpdate {
  teamId: number;
  name: string;
  type: DefinitionType;
  groupTypeIndex: number | null;
  propertyType: PropertyType | null;
  /** The event name an event property was seen on; null for person and group properties. */
  event: string | null;
}

/** Definitions a chunk found new (or due a last-seen refresh), to be written with its rows. */
export class DefinitionUpdates {
  readonly events: EventDefinitionUpdate[] = [];
  readonly properties: PropertyDefinitionUpdate[] = [];
  /** Keys of what is already listed, so a chunk lists each definition once. */
  private readonly listed = new Set<string>();

  get size(): number {
    return this.events.length + this.properties.length;
  }

  addEvent(update: EventDefinitionUpdate): void {
    if (this.once(`e\u0000${update.teamId}\u0000${update.name}`)) this.events.push(update);
  }

  addProperty(update: PropertyDefinitionUpdate): void {
    if (this.once(`p\u0000${update.teamId}\u0000${update.type}\u0000${update.groupTypeIndex}\u0000${update.event}\u0000${update.name}`)) this.properties.push(update);
  }

  append(other: DefinitionUpdates): void {
    for (const update of other.events) this.addEvent(update);
    for (const update of other.properties) this.addProperty(update);
  }

  private once(key: string): boolean {
    if (this.listed.has(key)) return false;
    this.listed.add(key);
    return true;
  }
}
