// Project secrets: names and when they changed (never values), set with a write-only input,
// delete. The server refuses the reserved SVC_ prefix; its message is shown as is.
import { useState } from 'preact/hooks';
import { api, CAP, canWrite, enc, type Me } from '../api.js';
import { Age, ErrorBox, Show, useAction, useLoad } from '../ui.js';
import type { Project } from './projects.js';

export interface SecretListing { secrets: { name: string; updated_at: string | null }[]; revision: string }

const secretsPath = (project: Project, name?: string) => `/projects/${enc(project.id)}/secrets${name ? `/${enc(name)}` : ''}`;

export function SecretsPage({ project, me }: { project: Project; me: Me }) {
  const loaded = useLoad(() => api<SecretListing>('GET', secretsPath(project)), project.id);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction();
  const writable = canWrite(me, CAP.secretWrite);
  const set = (e: Event) => {
    e.preventDefault();
    const secretName = name.trim();
    void action.run(async () => {
      await api('PUT', secretsPath(project, secretName), { value });
      setValue('');
      setName('');
      setSaved(secretName);
      loaded.reload();
    });
  };
  const remove = (secretName: string) => action.run(async () => {
    if (!confirm(`Delete the secret ${secretName}? Sandboxes started afterwards will not have it.`)) return;
    await api('DELETE', secretsPath(project, secretName));
    setSaved(null);
    loaded.reload();
  });
  return (
    <main>
      <h1>Secrets</h1>
      <p class="muted">Secrets reach new sandboxes as environment variables. Values are write-only: they are never shown again.</p>
      <Show loaded={loaded} what="secrets">{(listing) => listing.secrets.length === 0 ? <p>No secrets.</p> : (
        <div class="table-wrap">
          <table>
            <thead><tr><th>Name</th><th>Changed</th>{writable ? <th><span class="sr-only">Actions</span></th> : null}</tr></thead>
            <tbody>
              {listing.secrets.map((s) => (
                <tr key={s.name}>
                  <td><code>{s.name}</code></td>
                  <td><Age at={s.updated_at} /></td>
                  {writable ? <td><button type="button" class="danger" disabled={action.busy} onClick={() => void remove(s.name)} aria-label={`Delete ${s.name}`}>Delete</button></td> : null}
                </tr>
              ))}
            </tbody>
          </table>
          <p class="muted">Revision {listing.revision}</p>
        </div>
      )}</Show>
      {writable ? (
        <form class="stack" onSubmit={set} autocomplete="off">
          <h2>Set a secret</h2>
          <label for="secret-name">Name</label>
          <input id="secret-name" value={name} spellcheck={false} placeholder="API_KEY" onInput={(e) => { setName((e.target as HTMLInputElement).value); setSaved(null); }} />
          <label for="secret-value">Value</label>
          <input id="secret-value" type="password" autocomplete="new-password" value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
          <div class="row"><button type="submit" class="primary" disabled={action.busy || !name.trim()}>Set</button>{saved ? <span class="ok" role="status">Saved {saved}.</span> : null}</div>
        </form>
      ) : null}
      <ErrorBox error={action.error} title="The server refused" />
    </main>
  );
}
