import type { Project } from '../api-client.js';

/** The empty state's next step: posthog-js pointed at this server with this project's key. */
export function InstallSnippet({ project }: { project: Project }) {
  const snippet = `posthog.init('${project.api_token}', { api_host: '${location.origin}' })`;
  return (
    <div class="empty">
      <p>No events yet. Send some from your site with posthog-js:</p>
      <pre>
        <code>{snippet}</code>
      </pre>
      <p>
        or from a shell: <code>{`curl ${location.origin}/capture/ -d '{"api_key": "${project.api_token}", "event": "hello", "distinct_id": "me"}'`}</code>
      </p>
    </div>
  );
}
