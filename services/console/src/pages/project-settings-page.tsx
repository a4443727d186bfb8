import { useState } from 'preact/hooks';
import type { Project } from '../api-client.js';
import { ErrorMessage } from '../components/error-message.js';
import { Field } from '../components/field.js';
import { useConsole } from '../console-context.js';
import { draftOf, MAX_RETENTION_DAYS, patchBody, retentionText, settingsErrors, type SettingsDraft } from '../project-settings-view.js';
import { useLoad } from '../use-load.js';

/** The chosen project's name, timezone and event retention, as `GET /api/projects/:id/` answers them, and a form that changes them. */
export function ProjectSettingsPage() {
  const { api, project } = useConsole();
  const loaded = useLoad(() => api.request<Project>('GET', `/projects/${project.id}/`), [api, project.id]);
  return (
    <section>
      <h1>Project settings</h1>
      <ErrorMessage error={loaded.error} />
      {loaded.data && (
        <>
          <dl class="status-figures">
            <dt>Name</dt>
            <dd data-setting="name">{loaded.data.name}</dd>
            <dt>Timezone</dt>
            <dd data-setting="timezone">{loaded.data.timezone}</dd>
            <dt>Event retention</dt>
            <dd data-setting="retention">{retentionText(loaded.data.event_retention_days)}</dd>
          </dl>
          <SettingsForm project={loaded.data} onSaved={loaded.reload} />
        </>
      )}
    </section>
  );
}

/** Each field checked before sending; what the API then refuses (an unknown timezone, say) is shown as it states it. */
function SettingsForm({ project, onSaved }: { project: Project; onSaved: () => void }) {
  const { api, reloadProjects } = useConsole();
  const [draft, setDraft] = useState<SettingsDraft>(() => draftOf(project));
  const [shown, setShown] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [saving, setSaving] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    setSaved(false);
    const errors = settingsErrors(draft);
    setShown(errors);
    if (Object.keys(errors).length > 0) return;
    setSaving(true);
    try {
      await api.request<Project>('PATCH', `/projects/${project.id}/`, patchBody(draft));
      setSaved(true);
      onSaved();
      // The project switcher shows the name too.
      reloadProjects();
    } catch (e) {
      setError(e);
    } finally {
      setSaving(false);
    }
  }

  const edit = (change: Partial<SettingsDraft>) => {
    setSaved(false);
    setDraft({ ...draft, ...change });
  };
  const text = (e: Event) => (e.target as HTMLInputElement).value;
  return (
    <form class="settings-form" onSubmit={submit} noValidate aria-labelledby="edit-settings">
      <h2 id="edit-settings">Edit settings</h2>
      <div class="builder">
        <Field id="settings-name" label="Name (required)" error={shown.name}>
          {(props) => <input {...props} value={draft.name} onInput={(e) => edit({ name: text(e) })} />}
        </Field>
        <Field id="settings-timezone" label="Timezone (required)" error={shown.timezone} hint="An IANA name, e.g. Europe/Berlin; insights count days, weeks and months in it">
          {(props) => <input {...props} autoComplete="off" value={draft.timezone} onInput={(e) => edit({ timezone: text(e) })} />}
        </Field>
      </div>
      <fieldset class="builder">
        <legend>Event retention</legend>
        <label class="choice">
          <input type="radio" name="settings-retention" id="settings-keep-forever" checked={draft.keepForever} onChange={() => edit({ keepForever: true })} />
          Keep forever
        </label>
        <label class="choice">
          <input type="radio" name="settings-retention" id="settings-keep-days" checked={!draft.keepForever} onChange={() => edit({ keepForever: false })} />
          Keep for a number of days
        </label>
        <Field id="settings-retention-days" label="Days" error={shown.retention_days} hint={`1 to ${MAX_RETENTION_DAYS}; older events are deleted daily at 04:00 UTC`}>
          {(props) => <input {...props} type="text" inputMode="numeric" autoComplete="off" disabled={draft.keepForever} value={draft.retentionDays} onInput={(e) => edit({ retentionDays: text(e) })} />}
        </Field>
      </fieldset>
      <div class="actions">
        <button type="submit" disabled={saving}>Save settings</button>
        {saved && <span role="status">Settings saved.</span>}
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}
