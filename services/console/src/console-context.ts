import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient, Project } from './api-client.js';

/** What every page needs once signed in: the API as the signed-in key, and the chosen project. */
export interface ConsoleContext {
  api: ApiClient;
  project: Project;
  /** Asks the API for the key's projects again, after one of them changed. */
  reloadProjects: () => void;
}

export const Console = createContext<ConsoleContext | null>(null);

export function useConsole(): ConsoleContext {
  const value = useContext(Console);
  if (!value) throw new Error('useConsole outside a signed-in console');
  return value;
}
