import { MEMBERSHIP_LEVEL, type ControlPlaneStore, type User } from '@tributary/control-plane';
import type { GrantedScope } from '@tributary/auth';

/** The level's name (`member`, `admin`, `owner`), as `--level` takes it. */
export function levelName(level: number): string {
  return Object.entries(MEMBERSHIP_LEVEL).find(([, value]) => value === level)?.[0] ?? String(level);
}

async function userByEmail(store: ControlPlaneStore, email: string): Promise<User> {
  const user = await store.findUserByEmail(email);
  if (!user) throw new Error(`no user has the e-mail ${email}; create it with users:create`);
  return user;
}

export interface OrganizationLine {
  id: string;
  name: string;
  level?: string;
}

/** `orgs:list`: every organization, or the user's with their level in each. */
export async function listOrganizations(store: ControlPlaneStore, email?: string): Promise<OrganizationLine[]> {
  if (email === undefined) return store.organizations();
  const user = await userByEmail(store, email);
  return (await store.organizationsOfUser(user.id)).map(({ id, name, level }) => ({ id, name, level: levelName(level) }));
}

export interface ProjectLine {
  id: number;
  name: string;
  organization_id: string;
}

/** `projects:list`: every project, or an organization's, or those of the organizations a user is in. */
export async function listProjects(store: ControlPlaneStore, filter: { email?: string; organization?: string }): Promise<ProjectLine[]> {
  let projects;
  if (filter.email !== undefined) {
    const user = await userByEmail(store, filter.email);
    projects = (await store.projectsForUser(user.id)).filter((p) => filter.organization === undefined || p.organization_id === filter.organization);
  } else {
    if (filter.organization !== undefined && !(await store.findOrganization(filter.organization))) throw new Error(`organization ${filter.organization} does not exist; orgs:list lists them`);
    projects = await store.projects(filter.organization);
  }
  return projects.map(({ id, name, organization_id }) => ({ id, name, organization_id }));
}

/**
 * `keys:create`: a key limited to projects the user cannot read would be refused on every call
 * (403), so each project must be one of the user's organizations'.
 */
export async function issueKey(
  store: ControlPlaneStore,
  input: { email: string; scopes: GrantedScope[]; projects?: number[]; label: string },
): ReturnType<ControlPlaneStore['createPersonalApiKey']> {
  const user = (await store.findUserByEmail(input.email)) ?? (await store.createUser({ email: input.email }));
  if (input.projects) {
    const readable = new Set((await store.projectsForUser(user.id)).map((p) => p.id));
    for (const id of input.projects) {
      if (readable.has(id)) continue;
      if (!(await store.findProject(id))) throw new Error(`project ${id} does not exist; projects:list lists them`);
      throw new Error(`${input.email} is not a member of project ${id}'s organization, so a key for it would be refused; add them with members:add, or see theirs with projects:list --email ${input.email}`);
    }
  }
  return store.createPersonalApiKey({ userId: user.id, label: input.label, scopes: input.scopes, scopedProjects: input.projects ?? null });
}

/**
 * `members:add`: a new member gets `level` (member when not given); an existing one keeps theirs
 * unless `level` is given, so running it again cannot demote an admin by accident.
 */
export async function addMember(
  store: ControlPlaneStore,
  input: { email: string; organization: string; level?: number },
): Promise<{ organization_id: string; user_uuid: string; email: string; level: string; change: 'added' | 'changed' | 'unchanged' }> {
  const user = await userByEmail(store, input.email);
  if (!(await store.findOrganization(input.organization))) throw new Error(`organization ${input.organization} does not exist; orgs:list lists them`);
  const current = await store.membershipLevel(input.organization, user.id);
  const level = input.level ?? current ?? MEMBERSHIP_LEVEL.member;
  if (level !== current) await store.addMembership(input.organization, user.id, level);
  const change = current === null ? 'added' : level === current ? 'unchanged' : 'changed';
  return { organization_id: input.organization, user_uuid: user.uuid, email: user.email, level: levelName(level), change };
}
