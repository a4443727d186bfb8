import { HttpError } from '@tributary/http';
import { personalApiKeyOf, requireKeyScopes, requireProjectAccess, type PersonalApiKeyGrant } from './personal-api-key-access.js';

const live: PersonalApiKeyGrant = { user_id: 7, scopes: ['feature_flag:read'], scoped_projects: null };
const asked: string[] = [];
const keys = {
  findPersonalApiKey: async (value: string) => {
    asked.push(value);
    return value === 'phx_live' ? live : null;
  },
};

/** The status and code a check refuses with. */
async function refusal(check: () => unknown): Promise<{ status: number; code: string }> {
  try {
    await check();
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error('the check passed');
}

describe('personal API key access', () => {
  beforeEach(() => {
    asked.length = 0;
  });

  it('takes the live key of an Authorization: Bearer header, in any case of "Bearer"', async () => {
    expect(await personalApiKeyOf('Bearer phx_live', keys)).toBe(live);
    expect(await personalApiKeyOf('bearer   phx_live ', keys)).toBe(live);
  });

  it('401 not_authenticated without a bearer credential', async () => {
    for (const header of [undefined, '', 'phx_live', 'Basic phx_live', 'Bearer']) {
      expect(await refusal(() => personalApiKeyOf(header, keys))).toEqual({ status: 401, code: 'not_authenticated' });
    }
  });

  it('401 for a project key, a key without the phx_ prefix or one no one holds; only phx_ keys are looked up', async () => {
    for (const value of ['phc_project', 'abc', 'phx_gone']) {
      expect(await refusal(() => personalApiKeyOf(`Bearer ${value}`, keys))).toEqual({ status: 401, code: 'authentication_failed' });
    }
    expect(asked).toEqual(['phx_gone']);
  });

  it('403 missing_scope for a scope the key lacks; a write scope covers its read', async () => {
    expect(() => requireKeyScopes(live, ['feature_flag:read'])).not.toThrow();
    expect(() => requireKeyScopes({ ...live, scopes: ['feature_flag:write'] }, ['feature_flag:read'])).not.toThrow();
    expect(await refusal(() => requireKeyScopes(live, ['feature_flag:write']))).toEqual({ status: 403, code: 'missing_scope' });
  });

  it('403 project_forbidden for a project outside the user\'s organizations or the key\'s projects', async () => {
    const projects = { projectsForUser: async () => [{ id: 1 }, { id: 2 }] };
    await expect(requireProjectAccess(live, 1, projects)).resolves.toBeUndefined();
    expect(await refusal(() => requireProjectAccess(live, 3, projects))).toEqual({ status: 403, code: 'project_forbidden' });
    expect(await refusal(() => requireProjectAccess({ ...live, scoped_projects: [2] }, 1, projects))).toEqual({ status: 403, code: 'project_forbidden' });
  });
});
