import { useState } from 'preact/hooks';
import { createApiClient } from '../api-client.js';
import { ErrorMessage } from '../components/error-message.js';

/** Checks the key against /api/projects/ before keeping it, so a typo is told at once. */
export function SignInPage({ onSignIn }: { onSignIn: (apiKey: string) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [checking, setChecking] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setChecking(true);
    setError(null);
    try {
      await createApiClient(key.trim()).request('GET', '/projects/');
      onSignIn(key.trim());
    } catch (e) {
      setError(e);
    } finally {
      setChecking(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>Tributary</h1>
      <form onSubmit={submit}>
        <label for="api-key">Personal API key</label>
        <input id="api-key" name="api-key" type="password" autocomplete="off" required placeholder="phx_…" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled={checking}>
          {checking ? 'Checking…' : 'Sign in'}
        </button>
        <ErrorMessage error={error} />
      </form>
      <p class="muted">
        The key is kept for this tab only. <code>make up</code> writes the demo project's key to <code>.tributary/credentials.env</code>; <code>npx tributary keys:create</code> makes more.
      </p>
    </main>
  );
}
