// Sign in with an API token (the CLI's SVC_CLI_TOKEN works); checked with GET /v1/me.
import { useState } from 'preact/hooks';
import { api, HttpError, type Me } from '../api.js';

export function SignIn({ onSignedIn, notice }: { onSignedIn: (token: string, me: Me) => void; notice?: string | null }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const value = token.trim();
    if (!value) { setError('Paste an API token first.'); return; }
    setBusy(true);
    setError(null);
    try {
      onSignedIn(value, await api<Me>('GET', '/me', undefined, value));
    } catch (e) {
      setError(e instanceof HttpError && e.status === 401
        ? `That token was not accepted: ${e.message}. Check it (svc dev prints one) and try again.`
        : `Could not sign in: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="signin">
      <h1>svc</h1>
      <form onSubmit={submit}>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck={false} value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)} placeholder="svc_…" />
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        {error ? <p class="error" role="alert">{error}</p> : notice ? <p class="error" role="alert">Signed out: the API no longer accepts the token ({notice}).</p> : null}
        <p class="muted">The token stays in this browser tab only; signing out forgets it.</p>
      </form>
    </main>
  );
}
