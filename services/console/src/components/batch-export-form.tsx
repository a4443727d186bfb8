import { useState } from 'preact/hooks';
import { ErrorMessage } from './error-message.js';
import { Field } from './field.js';
import { useConsole } from '../console-context.js';
import { DESTINATION_FIELDS, DESTINATION_TYPES, INTERVALS, createBody, draftErrors, initialFields, type BatchExport, type DestinationType, type ExportDraft, type FieldSpec } from '../batch-export-view.js';

/**
 * A new export: its name, schedule and one destination's fields, each checked before sending;
 * what the API then refuses (an internal destination, say) is shown as it states it.
 */
export function BatchExportForm({ onCreated }: { onCreated: (created: BatchExport) => void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState<ExportDraft>({ name: '', interval: 'hour', model: 'events', type: 'S3', fields: initialFields('S3') });
  const [shown, setShown] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    const errors = draftErrors(draft);
    setShown(errors);
    if (Object.keys(errors).length > 0) return;
    setSaving(true);
    try {
      onCreated(await api.project<BatchExport>('POST', '/batch_exports/', createBody(draft)));
      setDraft({ ...draft, name: '', fields: initialFields(draft.type) });
    } catch (e) {
      setError(e);
    } finally {
      setSaving(false);
    }
  }

  const setField = (name: string, value: string) => setDraft({ ...draft, fields: { ...draft.fields, [name]: value } });
  return (
    <form class="export-form" onSubmit={submit} noValidate aria-labelledby="new-export">
      <h2 id="new-export">New batch export</h2>
      <div class="builder">
        <Field id="export-name" label="Name" error={shown.name}>
          {(props) => <input {...props} value={draft.name} onInput={(e) => setDraft({ ...draft, name: (e.target as HTMLInputElement).value })} />}
        </Field>
        <Field id="export-type" label="Destination">
          {(props) => (
            <select {...props} value={draft.type} onChange={(e) => { const type = (e.target as HTMLSelectElement).value as DestinationType; setShown({}); setDraft({ ...draft, type, fields: initialFields(type) }); }}>
              {DESTINATION_TYPES.map((t) => <option value={t}>{t}</option>)}
            </select>
          )}
        </Field>
        <Field id="export-interval" label="Interval">
          {(props) => (
            <select {...props} value={draft.interval} onChange={(e) => setDraft({ ...draft, interval: (e.target as HTMLSelectElement).value })}>
              {INTERVALS.map((i) => <option value={i}>{i}</option>)}
            </select>
          )}
        </Field>
        <Field id="export-model" label="Model">
          {(props) => (
            <select {...props} value={draft.model} onChange={(e) => setDraft({ ...draft, model: (e.target as HTMLSelectElement).value as ExportDraft['model'] })}>
              <option value="events">events</option>
              <option value="persons">persons</option>
            </select>
          )}
        </Field>
      </div>
      <fieldset class="builder">
        <legend>{draft.type} destination</legend>
        {DESTINATION_FIELDS[draft.type].map((spec) => (
          <DestinationField spec={spec} value={draft.fields[spec.name] ?? ''} error={shown[spec.name]} onInput={(value) => setField(spec.name, value)} />
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" disabled={saving}>Create export</button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

function DestinationField({ spec, value, error, onInput }: { spec: FieldSpec; value: string; error: string | undefined; onInput: (value: string) => void }) {
  const handler = (e: Event) => onInput((e.target as HTMLInputElement | HTMLSelectElement).value);
  return (
    <Field id={`export-${spec.name}`} label={spec.label + (spec.required ? ' (required)' : '')} error={error} hint={spec.hint}>
      {(props) =>
        spec.kind === 'select' ? (
          <select {...props} value={value} onChange={handler}>
            {spec.options!.map((o) => <option value={o}>{o || 'none'}</option>)}
          </select>
        ) : (
          <input {...props} type={spec.kind === 'password' ? 'password' : spec.kind === 'port' ? 'text' : spec.kind === 'url' ? 'url' : 'text'} inputMode={spec.kind === 'port' ? 'numeric' : undefined} autoComplete="off" value={value} onInput={handler} />
        )
      }
    </Field>
  );
}
