export type TokenCheck = { ok: true; token: string } | { ok: false; detail: string };

/** Project API key rules at the edge: trimmed, 1..64 printable ASCII characters, never a personal key. */
export function checkToken(raw: unknown): TokenCheck {
  if (typeof raw !== 'string') return { ok: false, detail: 'Project API key is missing: send it as api_key (or token) in the body.' };
  const token = raw.trim();
  if (token.length === 0) return { ok: false, detail: 'Project API key is empty.' };
  if (token.length > 64) return { ok: false, detail: 'Project API key is longer than 64 characters.' };
  if (!/^[\x21-\x7e]+$/.test(token)) return { ok: false, detail: 'Project API key must be printable ASCII.' };
  if (token.startsWith('phx_')) return { ok: false, detail: 'This is a personal API key; capture takes the project API key (phc_...).' };
  return { ok: true, token };
}
