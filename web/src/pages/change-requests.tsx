// Change requests: the list with its status filter (open by default) and one CR's page: editable
// title and description, merge preview, coloured diff, requested-changes log and the actions
// the token may use.
import { useState } from 'preact/hooks';
import type { ChangeRequestPreview, SerializedChangeRequest } from '../../../src/lib/rest-shapes.js';
import { api, CAP, canWrite, enc, type Me } from '../api.js';
import { splitPatch } from '../diff.js';
import { href } from '../router.js';
import { Age, ConflictList, ErrorBox, Sha, Show, Status, useAction, useLoad } from '../ui.js';
import { DiffView, type DiffBody } from './diff-view.js';
import type { Project as FullProject } from './projects.js';

/** These pages need only the project's id, so they load alongside the project, not after it. */
type Project = Pick<FullProject, 'id'>;

type Cr = SerializedChangeRequest;
const STATUSES = ['open', 'merged', 'closed', 'all'] as const;

type Preview = ChangeRequestPreview;

const crPath = (project: Project, cr?: string) => `/projects/${enc(project.id)}/change-requests${cr ? `/${enc(cr)}` : ''}`;

export function ChangeRequestsPage({ project, status }: { project: Project; status: string }) {
  const filter = (STATUSES as readonly string[]).includes(status) ? status : 'open';
  const loaded = useLoad(() => api<{ change_requests: Cr[] }>('GET', `${crPath(project)}?status=${filter}`), `${project.id}:${filter}`);
  return (
    <main>
      <h1>Change requests</h1>
      <nav class="filter" aria-label="Status filter">
        {STATUSES.map((s) => (
          <a key={s} href={href(['projects', project.id, 'change-requests'], { status: s })} aria-current={s === filter ? 'page' : undefined}>{s}</a>
        ))}
      </nav>
      <Show loaded={loaded} what="change requests">{({ change_requests: crs }) => crs.length === 0 ? <p>No {filter === 'all' ? '' : `${filter} `}change requests.</p> : (
        <div class="table-wrap">
          <table>
            <thead><tr><th>#</th><th>Title</th><th>Branches</th><th>Status</th><th>Author</th><th>Opened</th></tr></thead>
            <tbody>
              {[...crs].sort((a, b) => b.number - a.number).map((cr) => (
                <tr key={cr.cr_id}>
                  <td>#{cr.number}</td>
                  <td class="wrap"><a href={href(['projects', project.id, 'change-requests', cr.cr_id])}>{cr.title}</a></td>
                  <td><code>{cr.head_ref}</code> → <code>{cr.base_ref}</code></td>
                  <td><Status value={cr.status} /></td>
                  <td><code title={cr.created_by}>{cr.created_by.slice(0, 8)}</code></td>
                  <td><Age at={cr.created_at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</Show>
    </main>
  );
}

function PreviewBox({ preview, headRef }: { preview: Preview; headRef: string }) {
  // the merge gate runs first: an invalid manifest on the head is refused however git would merge it
  const gate = preview.is_up_to_date ? [] : preview.manifest_issues ?? [];
  const git = preview.is_up_to_date ? 'Up to date: the head is already merged into the base.'
    : !preview.can_merge ? 'This change request has conflicts that must be resolved before it can merge.'
      : preview.can_fast_forward ? 'Can merge: the base fast-forwards to the head.' : 'Can merge: a merge commit will be created.';
  const summary = gate.length
    ? [`The merge gate will refuse this change request: the manifest on ${headRef} has ${gate.length} issue${gate.length === 1 ? '' : 's'}. Fix ${gate.length === 1 ? 'it' : 'them'} on the branch, then merge.`,
      preview.can_merge ? `Then: ${git.replace('Can merge: ', '')}` : git]
    : [git];
  return (
    <section class={`preview ${preview.can_merge && !preview.is_up_to_date && !gate.length ? 'preview-ok' : 'preview-bad'}`} aria-label="Merge preview">
      <p>{summary[0]}</p>
      {gate.length ? <ul class="issues">{gate.map((i) => <li key={i.path + i.message}><code>{i.path || '(top level)'}</code>: {i.message}</li>)}</ul> : null}
      {summary[1] ? <p>{summary[1]}</p> : null}
      <ConflictList conflicts={preview.conflicts} omitted={preview.conflicts_omitted} />
      <p class="muted">base <Sha sha={preview.base_sha} /> · head <Sha sha={preview.head_sha} /> · merge base <Sha sha={preview.merge_base} /></p>
    </section>
  );
}

function EditForm({ project, cr, onSaved, onCancel }: { project: Project; cr: Cr; onSaved: (cr: Cr) => void; onCancel: () => void }) {
  const [title, setTitle] = useState(cr.title);
  const [description, setDescription] = useState(cr.description);
  const action = useAction();
  return (
    <form class="stack" onSubmit={(e) => { e.preventDefault(); void action.run(async () => onSaved((await api<{ change_request: Cr }>('PATCH', crPath(project, cr.cr_id), { title, description })).change_request)); }}>
      <label for="cr-title">Title</label>
      <input id="cr-title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
      <label for="cr-description">Description</label>
      <textarea id="cr-description" rows={5} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
      <div class="row"><button type="submit" disabled={action.busy}>Save</button><button type="button" class="secondary" onClick={onCancel}>Cancel</button></div>
      <ErrorBox error={action.error} title="Not saved" />
    </form>
  );
}

export function ChangeRequestPage({ project, crId, me }: { project: Project; crId: string; me: Me }) {
  const loaded = useLoad(async () => {
    // all three at once; the preview matters only for an open CR (a closed one may have lost its branches)
    const [cr, diff, preview] = await Promise.all([
      api<{ change_request: Cr }>('GET', crPath(project, crId)).then((b) => b.change_request),
      api<DiffBody>('GET', `${crPath(project, crId)}/diff`),
      // why there is none (a branch deleted on the host) is said where the preview would be
      api<Preview>('GET', `${crPath(project, crId)}/merge-preview`).catch((error: Error) => ({ unavailable: error.message })),
    ]);
    return { cr, diff, preview: cr.status === 'open' ? preview : null };
  }, `${project.id}:${crId}`);
  const [editing, setEditing] = useState(false);
  const [message, setMessage] = useState('');
  const [feedback, setFeedback] = useState('');
  const action = useAction();
  const act = (what: string, body?: unknown) => action.run(async () => {
    await api('POST', `${crPath(project, crId)}/${what}`, body);
    if (what === 'request-changes') setFeedback('');
    loaded.reload();
  });

  return (
    <main>
      <p><a href={href(['projects', project.id, 'change-requests'])}>← Change requests</a></p>
      <Show loaded={loaded} what="the change request">{({ cr, diff, preview }) => {
        const writable = canWrite(me);
        const sections = splitPatch(diff.patch);
        return (
          <>
            {editing ? (
              <EditForm project={project} cr={cr} onCancel={() => setEditing(false)} onSaved={() => { setEditing(false); loaded.reload(); }} />
            ) : (
              <header class="cr-head">
                <h1><span class="muted">#{cr.number}</span> {cr.title}</h1>
                <p><Status value={cr.status} /> <code>{cr.head_ref}</code> → <code>{cr.base_ref}</code> · opened <Age at={cr.created_at} /> by <code title={cr.created_by}>{cr.created_by.slice(0, 8)}</code>
                  {cr.origin_session_id ? <> · session <a href={href(['projects', project.id, 'sessions', cr.origin_session_id])}>{cr.origin_session_id.slice(0, 8)}</a></> : null}
                  {cr.merge_commit_sha ? <> · merged as <Sha sha={cr.merge_commit_sha} /> <Age at={cr.merged_at} /></> : null}
                </p>
                {cr.description ? <p class="description">{cr.description}</p> : <p class="muted">No description.</p>}
                {writable ? <button type="button" class="secondary" onClick={() => setEditing(true)}>Edit title and description</button> : null}
              </header>
            )}
            {preview && 'unavailable' in preview ? (
              <section class="preview preview-bad" aria-label="Merge preview"><p>No merge preview: {preview.unavailable}</p></section>
            ) : preview ? <PreviewBox preview={preview} headRef={cr.head_ref} /> : null}
            <section class="actions" aria-label="Actions">
              {cr.status === 'open' && canWrite(me, CAP.merge) && preview && !('unavailable' in preview) && preview.can_merge && !preview.is_up_to_date ? (
                <form class="row" onSubmit={(e) => { e.preventDefault(); void act('merge', message.trim() ? { message } : {}); }}>
                  <label class="sr-only" for="merge-message">Merge commit message (optional)</label>
                  <input id="merge-message" placeholder={`Merge CR #${cr.number}: ${cr.title}`} value={message} onInput={(e) => setMessage((e.target as HTMLInputElement).value)} />
                  <button type="submit" class="primary" disabled={action.busy}>Merge</button>
                </form>
              ) : null}
              {cr.status === 'open' && writable ? <button type="button" class="secondary" disabled={action.busy} onClick={() => void act('close')}>Close</button> : null}
              {cr.status === 'closed' && writable ? <button type="button" class="secondary" disabled={action.busy} onClick={() => void act('reopen')}>Reopen</button> : null}
              <ErrorBox error={action.error} title="The server refused" />
            </section>
            <DiffView diff={diff} sections={sections} />
            <section>
              <h2>Requested changes</h2>
              {cr.metadata.requested_changes.length === 0 ? <p class="muted">None yet.</p> : (
                <ol class="log">
                  {cr.metadata.requested_changes.map((note, i) => (
                    <li key={i}><p class="note">{note.text}</p><p class="muted"><code title={note.by}>{note.by.slice(0, 8)}</code> · <Age at={note.at} /></p></li>
                  ))}
                </ol>
              )}
              {cr.status === 'open' && canWrite(me, CAP.push) ? (
                <form class="stack" onSubmit={(e) => { e.preventDefault(); if (feedback.trim()) void act('request-changes', { feedback }); }}>
                  <label for="feedback">{cr.origin_session_id
                    ? "Request changes (sent to the session's agent)"
                    : 'Request changes (kept on this change request: no session opened it, so no agent is told)'}</label>
                  <textarea id="feedback" rows={3} value={feedback} onInput={(e) => setFeedback((e.target as HTMLTextAreaElement).value)} />
                  <div class="row"><button type="submit" disabled={action.busy || !feedback.trim()}>Request changes</button></div>
                </form>
              ) : null}
            </section>
          </>
        );
      }}</Show>
    </main>
  );
}

