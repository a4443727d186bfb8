import type { Config } from '@tributary/config';
import type { GrantedScope } from '@tributary/auth';
import { ControlPlaneStore } from '@tributary/control-plane';
import { createPool } from '@tributary/postgres';

/**
 * Issues and revokes personal API keys for the user of a given key, in Postgres as the CLI does:
 * a request authenticated by a personal key may not manage keys (only the user's session may, as
 * in PostHog), and the run needs extra keys to stay under the per-key rate limit.
 */
export interface KeyIssuer {
  issue(label: string, scopes: GrantedScope[], scopedProjects?: number[]): Promise<{ id: string; value: string }>;
  revoke(id: string): Promise<void>;
  close(): Promise<void>;
}

export async function keyIssuerFor(config: Config, personalApiKey: string): Promise<KeyIssuer> {
  const pool = createPool(config, { max: 1 });
  const store = new ControlPlaneStore(pool, config.apiKeyPepper);
  const owner = await store.findPersonalApiKey(personalApiKey);
  if (!owner) {
    await pool.end();
    throw new Error('the personal API key of the credentials file does not exist');
  }
  return {
    async issue(label, scopes, scopedProjects) {
      const { key, record } = await store.createPersonalApiKey({ userId: owner.user_id, label, scopes, scopedProjects: scopedProjects ?? null });
      return { id: record.id, value: key };
    },
    async revoke(id) {
      await store.deleteKeyOfUser(owner.user_id, id);
    },
    close: () => pool.end(),
  };
}
