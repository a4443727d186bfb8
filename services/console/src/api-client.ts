/**
 * The management API, called from the page with the signed-in personal API key. Errors carry the
 * API's own `detail` (and `code`), because the console shows them as the API states them.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

export interface Project {
  id: number;
  name: string;
  api_token: string;
  timezone: string;
  /** Days the project's events are kept; null keeps them forever. */
  event_retention_days: number | null;
}

export interface ApiClient {
  /** A path under /api/, e.g. `/projects/`. */
  request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T>;
  /** A path under the project, e.g. `/dashboards/` → /api/environments/:id/dashboards/. */
  project<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T>;
}

/** A client for `apiKey`; `projectId` is the project its `project` calls go to. */
export function createApiClient(apiKey: string, projectId?: number): ApiClient {
  async function request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const response = await fetch(`/api${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
      signal: signal ?? null,
    });
    const text = await response.text();
    const parsed: unknown = text ? parseJson(text) : null;
    if (!response.ok) {
      const error = (parsed ?? {}) as { code?: string; detail?: string };
      throw new ApiError(response.status, error.code ?? String(response.status), error.detail ?? (text || response.statusText));
    }
    return parsed as T;
  }
  return {
    request,
    project(method, path, body, signal) {
      if (projectId === undefined) return Promise.reject(new ApiError(0, 'no_project', 'Choose a project first.'));
      return request(method, `/environments/${projectId}${path}`, body, signal);
    },
  };
}

// A proxy's HTML error page is not JSON; its text is still what went wrong.
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { detail: text };
  }
}

/** What an error says on screen: the API's detail, or the browser's reason for a network failure. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
