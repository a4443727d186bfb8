import { useMemo, useState } from 'preact/hooks';
import { createApiClient, type Project } from './api-client.js';
import { ErrorMessage } from './components/error-message.js';
import { Console } from './console-context.js';
import { BatchExportsPage } from './pages/batch-exports-page.js';
import { DashboardPage } from './pages/dashboard-page.js';
import { DashboardsPage } from './pages/dashboards-page.js';
import { EventsPage } from './pages/events-page.js';
import { ExperimentsPage } from './pages/experiments-page.js';
import { FeatureFlagsPage } from './pages/feature-flags-page.js';
import { InsightsPage } from './pages/insights-page.js';
import { PersonsPage } from './pages/persons-page.js';
import { ProjectSettingsPage } from './pages/project-settings-page.js';
import { SignInPage } from './pages/sign-in-page.js';
import { SqlPage } from './pages/sql-page.js';
import { WebAnalyticsPage } from './pages/web-analytics-page.js';
import { StatusPage } from './pages/status-page.js';
import { link, usePath } from './router.js';
import { session } from './session.js';
import { useLoad } from './use-load.js';

// Console paths; nginx answers each with index.html. /flags is decide's; /status is the api's
// page when loaded directly, and this console's Status page when followed from the navigation.
const PAGES = [
  { path: '/dashboards', label: 'Dashboards' },
  { path: '/insights', label: 'Insights' },
  { path: '/web', label: 'Web analytics' },
  { path: '/sql', label: 'SQL' },
  { path: '/events', label: 'Events' },
  { path: '/persons', label: 'Persons' },
  { path: '/feature-flags', label: 'Feature flags' },
  { path: '/experiments', label: 'Experiments' },
  { path: '/batch-exports', label: 'Batch exports' },
  { path: '/settings', label: 'Project settings' },
  { path: '/status', label: 'Status' },
];

export function App() {
  const [apiKey, setApiKey] = useState(session.apiKey());
  if (!apiKey) {
    return (
      <SignInPage
        onSignIn={(key) => {
          session.signIn(key);
          setApiKey(key);
        }}
      />
    );
  }
  return (
    <SignedIn
      apiKey={apiKey}
      onSignOut={() => {
        session.signOut();
        setApiKey(null);
      }}
    />
  );
}

function SignedIn({ apiKey, onSignOut }: { apiKey: string; onSignOut: () => void }) {
  const [projectId, setProjectId] = useState(session.projectId());
  const account = useMemo(() => createApiClient(apiKey), [apiKey]);
  const projects = useLoad(() => account.request<{ results: Project[] }>('GET', '/projects/'), [account]);
  const path = usePath();
  const list = projects.data?.results ?? [];
  // The project chosen earlier in this tab, or the key's first.
  const project = list.find((p) => p.id === projectId) ?? list[0];
  const context = useMemo(() => (project ? { api: createApiClient(apiKey, project.id), project, reloadProjects: projects.reload } : null), [apiKey, project, projects.reload]);

  return (
    <div class="layout">
      <header class="topbar">
        <a class="brand" href="/dashboards" onClick={link('/dashboards')}>
          Tributary
        </a>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map((page) => (
              <li>
                <a href={page.path} onClick={link(page.path)} aria-current={path.startsWith(page.path) ? 'page' : undefined}>
                  {page.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <label class="project-switcher">
          Project
          <select
            value={project?.id}
            onChange={(e) => {
              const id = Number((e.target as HTMLSelectElement).value);
              session.chooseProject(id);
              setProjectId(id);
            }}
          >
            {list.map((p) => (
              <option value={p.id}>{p.name}</option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        <ErrorMessage error={projects.error} />
        {projects.data && !project && <p class="empty">This key has no projects. Create one with `npx tributary projects:create`.</p>}
        {context && (
          // Keyed by project: switching starts every page afresh instead of showing the last project's data.
          <Console.Provider value={context} key={context.project.id}>
            <Page path={path} />
          </Console.Provider>
        )}
      </main>
    </div>
  );
}

function Page({ path }: { path: string }) {
  const dashboard = /^\/dashboards\/(\d+)\/?$/.exec(path);
  if (dashboard) return <DashboardPage id={Number(dashboard[1])} />;
  if (path.startsWith('/insights')) return <InsightsPage />;
  if (path.startsWith('/sql')) return <SqlPage />;
  if (path.startsWith('/web')) return <WebAnalyticsPage />;
  if (path.startsWith('/events')) return <EventsPage />;
  if (path.startsWith('/persons')) return <PersonsPage />;
  if (path.startsWith('/feature-flags')) return <FeatureFlagsPage />;
  if (path.startsWith('/experiments')) return <ExperimentsPage />;
  if (path.startsWith('/batch-exports')) return <BatchExportsPage />;
  if (path.startsWith('/settings')) return <ProjectSettingsPage />;
  if (path.startsWith('/status')) return <StatusPage />;
  return <DashboardsPage />;
}
