// The status page (served by api at /status, same origin) reads the key from here too.
const KEY = 'tributary-key';
const PROJECT = 'tributary.projectId';

/**
 * The personal API key lives in sessionStorage: it is gone when the tab closes, and other tabs
 * and later visits have to sign in again.
 */
export const session = {
  apiKey: (): string | null => sessionStorage.getItem(KEY),
  projectId: (): number | undefined => {
    const stored = Number(sessionStorage.getItem(PROJECT));
    return Number.isInteger(stored) && stored > 0 ? stored : undefined;
  },
  signIn(apiKey: string): void {
    sessionStorage.setItem(KEY, apiKey);
  },
  chooseProject(id: number): void {
    sessionStorage.setItem(PROJECT, String(id));
  },
  signOut(): void {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(PROJECT);
  },
};
