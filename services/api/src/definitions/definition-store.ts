import type { Pool } from '@tributary/postgres';
import { USER_COLUMNS, type UserColumns } from '../organizations/organization-user.js';

/** What members may change of a definition; ingest keeps the rest. */
export interface DefinitionChanges {
  description?: string;
  tags?: string[];
  verified?: boolean;
  hidden?: boolean;
}

interface Editable {
  id: string;
  name: string;
  description: string;
  tags: string[];
  verified: boolean;
  verified_at: Date | null;
  verified_by: number | null;
  hidden: boolean;
  updated_at: Date;
  updated_by: number | null;
}

export interface EventDefinitionRow extends Editable {
  created_at: Date;
  last_seen_at: Date | null;
}

export interface PropertyDefinitionRow extends Editable {
  is_numerical: boolean;
  property_type: string | null;
  /** Null unless the list was asked about `event_names`. */
  is_seen_on_filtered_events: boolean | null;
}

export type EventOrdering = { column: 'name' | 'last_seen_at' | 'last_seen_at::date'; descending: boolean };

export interface EventDefinitionFilters {
  search?: string;
  /** `posthog`: names starting with `$`; `custom`: the others. */
  origin: 'any' | 'posthog' | 'custom';
  excludeHidden: boolean;
  excluded: string[];
  ordering: EventOrdering[];
}

export interface PropertyDefinitionFilters {
  search?: string;
  type: 1 | 2 | 3;
  groupTypeIndex: number | null;
  names?: string[];
  /** true: numerical ones only (never distinct_id or timestamp); false: the others. */
  numerical?: boolean;
  featureFlag?: boolean;
  eventNames?: string[];
  onlySeenOnEvents: boolean;
  excludeHidden: boolean;
  excluded: string[];
}

/** Conditions and their parameters, numbered as they are added. */
class Where {
  readonly conditions: string[] = [];
  readonly params: unknown[];

  constructor(teamId: number) {
    this.params = [teamId];
    this.conditions.push('d.team_id = $1');
  }

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(condition: string): void {
    this.conditions.push(condition);
  }

  /** Every whitespace-separated term of `search` within the name, as PostHog's term search. */
  search(search: string | undefined): void {
    for (const term of (search ?? '').split(/\s+/).filter(Boolean)) {
      this.add(`d.name ILIKE ${this.param(`%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`);
    }
  }

  get sql(): string {
    return this.conditions.join(' AND ');
  }
}

const ORDER_COLUMNS: Record<EventOrdering['column'], string> = { name: 'd.name', last_seen_at: 'd.last_seen_at', 'last_seen_at::date': "(d.last_seen_at AT TIME ZONE 'UTC')::date" };

const EDITABLE = `d.id, d.name, d.description, d.tags, d.verified, d.verified_at, d.verified_by, d.hidden, d.updated_at, d.updated_by`;
const EVENT_COLUMNS = `${EDITABLE}, d.created_at, d.last_seen_at`;
const PROPERTY_COLUMNS = `${EDITABLE}, d.is_numerical, d.property_type`;

/** The event and property definitions ingest keeps (migration 0016), each read within its project. */
export class DefinitionStore {
  constructor(private readonly pool: Pool) {}

  async listEvents(teamId: number, filters: EventDefinitionFilters, limit: number, offset: number): Promise<{ count: number; results: EventDefinitionRow[] }> {
    const where = new Where(teamId);
    where.search(filters.search);
    if (filters.origin === 'posthog') where.add(`d.name LIKE '$%'`);
    if (filters.origin === 'custom') where.add(`d.name NOT LIKE '$%'`);
    if (filters.excludeHidden) where.add('NOT d.hidden');
    if (filters.excluded.length > 0) where.add(`NOT d.name = ANY(${where.param(filters.excluded)})`);
    const order = filters.ordering.map(({ column, descending }) => `${ORDER_COLUMNS[column]} ${descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`);
    return this.page<EventDefinitionRow>(`SELECT ${EVENT_COLUMNS} FROM event_definitions d WHERE ${where.sql}`, where, [...order, 'd.id'], limit, offset);
  }

  async listProperties(teamId: number, filters: PropertyDefinitionFilters, limit: number, offset: number): Promise<{ count: number; results: PropertyDefinitionRow[] }> {
    const where = new Where(teamId);
    where.add(`d.type = ${where.param(filters.type)}`);
    where.add(`coalesce(d.group_type_index, -1) = ${where.param(filters.groupTypeIndex ?? -1)}`);
    where.search(filters.search);
    if (filters.names) where.add(`d.name = ANY(${where.param(filters.names)})`);
    if (filters.numerical === true) where.add(`d.is_numerical AND d.name NOT IN ('distinct_id', 'timestamp')`);
    if (filters.numerical === false) where.add('NOT d.is_numerical');
    if (filters.featureFlag !== undefined) where.add(`d.name ${filters.featureFlag ? '' : 'NOT '}LIKE '$feature/%'`);
    if (filters.excludeHidden) where.add('NOT d.hidden');
    if (filters.excluded.length > 0) where.add(`NOT d.name = ANY(${where.param(filters.excluded)})`);
    let seen = 'NULL::boolean';
    if (filters.eventNames) {
      seen = `EXISTS (SELECT 1 FROM event_properties ep WHERE ep.team_id = d.team_id AND ep.property = d.name AND ep.event = ANY(${where.param(filters.eventNames)}))`;
      if (filters.onlySeenOnEvents) where.add(seen);
    }
    return this.page<PropertyDefinitionRow>(
      `SELECT ${PROPERTY_COLUMNS}, ${seen} AS is_seen_on_filtered_events FROM property_definitions d WHERE ${where.sql}`,
      where,
      ['is_seen_on_filtered_events DESC NULLS LAST', 'd.verified DESC', 'd.name', 'd.id'],
      limit,
      offset,
    );
  }

  async getEvent(teamId: number, id: string): Promise<EventDefinitionRow | null> {
    const { rows } = await this.pool.query<EventDefinitionRow>(`SELECT ${EVENT_COLUMNS} FROM event_definitions d WHERE d.team_id = $1 AND d.id = $2`, [teamId, id]);
    return rows[0] ?? null;
  }

  async getProperty(teamId: number, id: string): Promise<PropertyDefinitionRow | null> {
    const { rows } = await this.pool.query<PropertyDefinitionRow>(
      `SELECT ${PROPERTY_COLUMNS}, NULL::boolean AS is_seen_on_filtered_events FROM property_definitions d WHERE d.team_id = $1 AND d.id = $2`,
      [teamId, id],
    );
    return rows[0] ?? null;
  }

  async updateEvent(teamId: number, id: string, changes: DefinitionChanges, userId: number): Promise<EventDefinitionRow | null> {
    const updated = await this.update('event_definitions', teamId, id, changes, {}, userId);
    return updated ? this.getEvent(teamId, id) : null;
  }

  /** `propertyType` undefined leaves the type; null clears it. */
  async updateProperty(teamId: number, id: string, changes: DefinitionChanges & { propertyType?: string | null }, userId: number): Promise<PropertyDefinitionRow | null> {
    const typed = changes.propertyType === undefined ? {} : { property_type: changes.propertyType, is_numerical: changes.propertyType === 'Numeric' };
    const updated = await this.update('property_definitions', teamId, id, changes, typed, userId);
    return updated ? this.getProperty(teamId, id) : null;
  }

  /** Whether the project had the definition; ingest makes it again when its name or key is seen again. */
  async delete(table: 'event_definitions' | 'property_definitions', teamId: number, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`DELETE FROM ${table} WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rowCount === 1;
  }

  /** The users that rows name (updated_by, verified_by), by id. */
  async users(ids: readonly (number | null)[]): Promise<Map<number, UserColumns>> {
    const wanted = [...new Set(ids.filter((id): id is number => id !== null))];
    if (wanted.length === 0) return new Map();
    const { rows } = await this.pool.query<UserColumns>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = ANY($1)`, [wanted]);
    return new Map(rows.map((row) => [row.user_id, row]));
  }

  private async update(table: 'event_definitions' | 'property_definitions', teamId: number, id: string, changes: DefinitionChanges, extra: Record<string, unknown>, userId: number): Promise<boolean> {
    const sets: string[] = ['updated_at = now()', 'updated_by = $3'];
    const params: unknown[] = [teamId, id, userId];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.tags !== undefined) set('tags', changes.tags);
    if (changes.hidden !== undefined) set('hidden', changes.hidden);
    if (changes.verified !== undefined) {
      set('verified', changes.verified);
      // Verifying a verified definition again keeps who verified it and when.
      sets.push(changes.verified ? 'verified_at = coalesce(verified_at, now()), verified_by = coalesce(verified_by, $3)' : 'verified_at = NULL, verified_by = NULL');
    }
    for (const [column, value] of Object.entries(extra)) set(column, value);
    const { rowCount } = await this.pool.query(`UPDATE ${table} SET ${sets.join(', ')} WHERE team_id = $1 AND id = $2`, params);
    return rowCount === 1;
  }

  private async page<Row extends EventDefinitionRow | PropertyDefinitionRow>(select: string, where: Where, order: string[], limit: number, offset: number): Promise<{ count: number; results: Row[] }> {
    const [{ rows }, counted] = await Promise.all([
      this.pool.query<Row>(`${select} ORDER BY ${order.join(', ')} LIMIT ${where.param(limit)} OFFSET ${where.param(offset)}`, where.params),
      this.pool.query<{ count: string }>(`SELECT count(*) AS count FROM (${select}) AS listed`, where.params.slice(0, where.params.length - 2)),
    ]);
    return { count: Number(counted.rows[0]!.count), results: rows };
  }
}
