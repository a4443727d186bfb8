import { errorText } from '../api-client.js';

/** An API error as the API states it (its `detail`), announced to screen readers. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}
