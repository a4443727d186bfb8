import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface Credentials {
  TRIBUTARY_URL: string;
  TRIBUTARY_PROJECT_ID: string;
  TRIBUTARY_PROJECT_API_KEY: string;
  TRIBUTARY_PERSONAL_API_KEY: string;
}

const KEYS: (keyof Credentials)[] = ['TRIBUTARY_URL', 'TRIBUTARY_PROJECT_ID', 'TRIBUTARY_PROJECT_API_KEY', 'TRIBUTARY_PERSONAL_API_KEY'];

/** Shell-sourceable `NAME='value'` lines; values never hold quotes (URLs, numbers, base62 keys). */
export function formatCredentials(credentials: Credentials): string {
  return KEYS.map((key) => `${key}='${credentials[key]}'`).join('\n') + '\n';
}

export function parseCredentials(text: string): Credentials | null {
  const values = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)='([^']*)'$/.exec(line.trim());
    if (match) values.set(match[1]!, match[2]!);
  }
  if (!KEYS.every((key) => values.get(key))) return null;
  return Object.fromEntries(KEYS.map((key) => [key, values.get(key)!])) as unknown as Credentials;
}

export async function readCredentials(file: string): Promise<Credentials | null> {
  try {
    return parseCredentials(await readFile(file, 'utf8'));
  } catch {
    return null;
  }
}

export async function writeCredentials(file: string, credentials: Credentials): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, formatCredentials(credentials), { mode: 0o600 });
}
