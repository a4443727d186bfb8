import { v4 as uuidv4 } from 'uuid';
import type { Pool, PoolClient } from '@tributary/postgres';
import {
  generatePersonalApiKey,
  generateProjectApiKey,
  hashPersonalApiKey,
  maskKey,
  type GrantedScope,
} from '@tributary/auth';

type Queryable = Pool | PoolClient;

export interface Organization {
  id: string;
  name: string;
}

export interface User {
  id: number;
  uuid: string;
  email: string;
  first_name: string;
  last_name: string;
  distinct_id: string;
}

export interface Project {
  id: number;
  uuid: string;
  organization_id: string;
  name: string;
  api_token: string;
  /** IANA name; insights bucket days in it. */
  timezone: string;
  /** Days its events are kept (the worker's daily retention job); null keeps them. */
  event_retention_days: number | null;
  /** Its queries' default modifiers (PostHog's team `modifiers`); a query's own take precedence. */
  modifiers: ProjectModifiers;
  created_at: Date;
}

export interface ProjectModifiers {
  /** Where events' persons come from: `disabled` or `person_id_override_properties_joined` (see `@tributary/hogql`). */
  personsOnEventsMode?: string;
}

export interface PersonalApiKeyRecord {
  id: string;
  user_id: number;
  label: string;
  mask_value: string;
  scopes: GrantedScope[];
  scoped_projects: number[] | null;
  created_at: Date;
  last_used_at: Date | null;
}

export const MEMBERSHIP_LEVEL = { member: 1, admin: 8, owner: 15 } as const;

export interface OrganizationWithLevel extends Organization {
  /** The user's membership level, where the list is one user's. */
  level: number;
}

const PROJECT_COLUMNS = 'id, uuid, organization_id, name, api_token, timezone, event_retention_days, modifiers, created_at';
const KEY_COLUMNS = 'id, user_id, label, mask_value, scopes, scoped_projects, created_at, last_used_at';

/** Postgres access for organizations, users, projects and personal API keys. */
export class ControlPlaneStore {
  constructor(
    private readonly db: Queryable,
    private readonly pepper: string,
  ) {}

  async createOrganization(name: string): Promise<Organization> {
    const { rows } = await this.db.query<Organization>('INSERT INTO organizations (id, name) VALUES ($1, $2) RETURNING id, name', [uuidv4(), name]);
    return rows[0]!;
  }

  async findOrganization(id: string): Promise<Organization | null> {
    const { rows } = await this.db.query<Organization>('SELECT id, name FROM organizations WHERE id = $1', [id]);
    return rows[0] ?? null;
  }

  /** Every organization, oldest first. */
  async organizations(): Promise<Organization[]> {
    const { rows } = await this.db.query<Organization>('SELECT id, name FROM organizations ORDER BY created_at, id');
    return rows;
  }

  /** The organizations the user belongs to, with their level in each, oldest first. */
  async organizationsOfUser(userId: number): Promise<OrganizationWithLevel[]> {
    const { rows } = await this.db.query<OrganizationWithLevel>(
      `SELECT o.id, o.name, m.level FROM organizations o JOIN organization_memberships m ON m.organization_id = o.id
       WHERE m.user_id = $1 ORDER BY o.created_at, o.id`,
      [userId],
    );
    return rows;
  }

  /** The user's level in the organization, or null when not a member. */
  async membershipLevel(organizationId: string, userId: number): Promise<number | null> {
    const { rows } = await this.db.query<{ level: number }>('SELECT level FROM organization_memberships WHERE organization_id = $1 AND user_id = $2', [organizationId, userId]);
    return rows[0]?.level ?? null;
  }

  async createUser(input: { email: string; firstName?: string; lastName?: string }): Promise<User> {
    const uuid = uuidv4();
    const { rows } = await this.db.query<User>(
      `INSERT INTO users (uuid, email, first_name, last_name, distinct_id) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, uuid, email, first_name, last_name, distinct_id`,
      [uuid, input.email, input.firstName ?? '', input.lastName ?? '', uuid],
    );
    return rows[0]!;
  }

  async findUserByEmail(email: string): Promise<User | null> {
    const { rows } = await this.db.query<User>('SELECT id, uuid, email, first_name, last_name, distinct_id FROM users WHERE email = $1', [email]);
    return rows[0] ?? null;
  }

  /** Instance operators (PostHog's `is_staff`) may read installation-wide figures; see `mayReadInstance`. */
  async isInstanceOperator(userId: number): Promise<boolean> {
    const { rows } = await this.db.query<{ is_staff: boolean }>('SELECT is_staff FROM users WHERE id = $1', [userId]);
    return rows[0]?.is_staff ?? false;
  }

  async setInstanceOperator(userId: number, operator: boolean): Promise<void> {
    await this.db.query('UPDATE users SET is_staff = $2 WHERE id = $1', [userId, operator]);
  }

  async addMembership(organizationId: string, userId: number, level: number): Promise<void> {
    await this.db.query(
      `INSERT INTO organization_memberships (id, organization_id, user_id, level) VALUES ($1, $2, $3, $4)
       ON CONFLICT (organization_id, user_id) DO UPDATE SET level = EXCLUDED.level, updated_at = now()`,
      [uuidv4(), organizationId, userId, level],
    );
  }

  async createProject(organizationId: string, name: string): Promise<Project> {
    const { rows } = await this.db.query<Project>(
      `INSERT INTO projects (uuid, organization_id, name, api_token) VALUES ($1, $2, $3, $4) RETURNING ${PROJECT_COLUMNS}`,
      [uuidv4(), organizationId, name, generateProjectApiKey()],
    );
    return rows[0]!;
  }

  /** Changes what is given; `event_retention_days: null` stops deleting the project's old events. */
  async updateProject(id: number, changes: { name?: string; timezone?: string; event_retention_days?: number | null; modifiers?: ProjectModifiers }): Promise<Project | null> {
    const { rows } = await this.db.query<Project>(
      `UPDATE projects SET name = COALESCE($2, name), timezone = COALESCE($3, timezone),
         event_retention_days = CASE WHEN $4 THEN $5::integer ELSE event_retention_days END,
         modifiers = COALESCE($6::jsonb, modifiers)
       WHERE id = $1 RETURNING ${PROJECT_COLUMNS}`,
      [id, changes.name ?? null, changes.timezone ?? null, changes.event_retention_days !== undefined, changes.event_retention_days ?? null, changes.modifiers ? JSON.stringify(changes.modifiers) : null],
    );
    return rows[0] ?? null;
  }

  async findProjectByToken(token: string): Promise<Project | null> {
    const { rows } = await this.db.query<Project>(`SELECT ${PROJECT_COLUMNS} FROM projects WHERE api_token = $1`, [token]);
    return rows[0] ?? null;
  }

  async findProject(id: number): Promise<Project | null> {
    const { rows } = await this.db.query<Project>(`SELECT ${PROJECT_COLUMNS} FROM projects WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Projects in organizations the user belongs to. */
  async projectsForUser(userId: number): Promise<Project[]> {
    const { rows } = await this.db.query<Project>(
      `SELECT ${PROJECT_COLUMNS.split(', ').map((c) => `p.${c}`).join(', ')} FROM projects p
       JOIN organization_memberships m ON m.organization_id = p.organization_id
       WHERE m.user_id = $1 ORDER BY p.id`,
      [userId],
    );
    return rows;
  }

  /** Every project, or an organization's, by id. */
  async projects(organizationId?: string): Promise<Project[]> {
    const { rows } = await this.db.query<Project>(
      `SELECT ${PROJECT_COLUMNS} FROM projects WHERE $1::uuid IS NULL OR organization_id = $1 ORDER BY id`,
      [organizationId ?? null],
    );
    return rows;
  }

  /** Issues a key and returns its value once; only its keyed hash is stored. */
  async createPersonalApiKey(input: {
    userId: number;
    label: string;
    scopes: GrantedScope[];
    scopedProjects?: number[] | null;
  }): Promise<{ key: string; record: PersonalApiKeyRecord }> {
    const key = generatePersonalApiKey();
    const { rows } = await this.db.query<PersonalApiKeyRecord>(
      `INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes, scoped_projects)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${KEY_COLUMNS}`,
      [uuidv4(), input.userId, input.label, hashPersonalApiKey(key, this.pepper), maskKey(key), input.scopes, input.scopedProjects ?? null],
    );
    return { key, record: rows[0]! };
  }

  async findPersonalApiKey(key: string): Promise<PersonalApiKeyRecord | null> {
    const { rows } = await this.db.query<PersonalApiKeyRecord>(
      `UPDATE personal_api_keys SET last_used_at = now() WHERE secure_value = $1 RETURNING ${KEY_COLUMNS}`,
      [hashPersonalApiKey(key, this.pepper)],
    );
    return rows[0] ?? null;
  }

  async keysOfUser(userId: number): Promise<PersonalApiKeyRecord[]> {
    const { rows } = await this.db.query<PersonalApiKeyRecord>(`SELECT ${KEY_COLUMNS} FROM personal_api_keys WHERE user_id = $1 ORDER BY created_at`, [userId]);
    return rows;
  }

  async deleteKeyOfUser(userId: number, keyId: string): Promise<boolean> {
    if (!/^[0-9a-f-]{36}$/i.test(keyId)) return false;
    const result = await this.db.query('DELETE FROM personal_api_keys WHERE user_id = $1 AND id = $2', [userId, keyId]);
    return result.rowCount === 1;
  }
}
