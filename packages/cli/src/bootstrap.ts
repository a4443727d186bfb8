import { access, rename } from 'node:fs/promises';
import type { Config } from '@tributary/config';
import { ControlPlaneStore, MEMBERSHIP_LEVEL } from '@tributary/control-plane';
import { withTransaction, type Pool } from '@tributary/postgres';
import { readCredentials, writeCredentials, type Credentials } from './credentials-file.js';

export const DEMO_EMAIL = 'demo@tributary.local';

export interface BootstrapResult {
  credentials: Credentials;
  /** The file's project and key were still in the database, and are kept. */
  reused: boolean;
  /** Where the file that was there before was moved, when it had to be replaced. */
  replacedFileKeptAs?: string;
}

const exists = (file: string) => access(file).then(() => true, () => false);

/**
 * Creates the demo organization, user, project and an all-scopes personal API key, unless the
 * credentials file already names a project and key that this database still knows. The key's user
 * is made an instance operator either way, so the status page works with the key `make up` prints.
 * A file naming what this database does not know (after the database was reset, say) is replaced,
 * not refused, so that `make up` still ends with working keys; the old one is kept beside it as
 * `<file>.old`, and the result says so.
 */
export async function bootstrap(pool: Pool, config: Config, file: string): Promise<BootstrapResult> {
  const existing = await readCredentials(file);
  if (existing) {
    const store = new ControlPlaneStore(pool, config.apiKeyPepper);
    const project = await store.findProject(Number(existing.TRIBUTARY_PROJECT_ID));
    const key = await store.findPersonalApiKey(existing.TRIBUTARY_PERSONAL_API_KEY);
    if (project && project.api_token === existing.TRIBUTARY_PROJECT_API_KEY && key) {
      await store.setInstanceOperator(key.user_id, true);
      const credentials = { ...existing, TRIBUTARY_URL: config.publicUrl };
      if (existing.TRIBUTARY_URL !== config.publicUrl) await writeCredentials(file, credentials);
      return { credentials, reused: true };
    }
  }
  const credentials = await withTransaction(pool, async (client) => {
    const store = new ControlPlaneStore(client, config.apiKeyPepper);
    const user = (await store.findUserByEmail(DEMO_EMAIL)) ?? (await store.createUser({ email: DEMO_EMAIL, firstName: 'Demo', lastName: 'User' }));
    const organization = await store.createOrganization('Demo organization');
    await store.addMembership(organization.id, user.id, MEMBERSHIP_LEVEL.owner);
    await store.setInstanceOperator(user.id, true);
    const project = await store.createProject(organization.id, 'Demo project');
    const { key } = await store.createPersonalApiKey({ userId: user.id, label: 'bootstrap (all scopes)', scopes: ['*'] });
    return {
      TRIBUTARY_URL: config.publicUrl,
      TRIBUTARY_PROJECT_ID: String(project.id),
      TRIBUTARY_PROJECT_API_KEY: project.api_token,
      TRIBUTARY_PERSONAL_API_KEY: key,
    };
  });
  let replacedFileKeptAs: string | undefined;
  if (await exists(file)) {
    replacedFileKeptAs = `${file}.old`;
    await rename(file, replacedFileKeptAs);
  }
  await writeCredentials(file, credentials);
  return { credentials, reused: false, ...(replacedFileKeptAs ? { replacedFileKeptAs } : {}) };
}
