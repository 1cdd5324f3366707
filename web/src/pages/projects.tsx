// The projects list and one project's page (manifest issues, trigger errors, conditions).
import type { SerializedChangeRequest, SerializedProject } from '../../../src/lib/rest-shapes.js';
import { api, enc } from '../api.js';
import { href } from '../router.js';
import { Age, IssueList, Sha, Show, useLoad } from '../ui.js';

export type Project = SerializedProject;

interface Counts { openCrs: number | null; runningSessions: number | null }

/** Open CRs and running sessions of one project; null where the route is missing or refused. */
async function countsOf(project: Project): Promise<Counts> {
  const [crs, sessions] = await Promise.allSettled([
    api<{ change_requests: SerializedChangeRequest[] }>('GET', `/projects/${enc(project.id)}/change-requests?status=open`),
    api<{ sessions: unknown[] }>('GET', `/projects/${enc(project.id)}/sessions?status=running`),
  ]);
  return {
    openCrs: crs.status === 'fulfilled' ? crs.value.change_requests.length : null,
    runningSessions: sessions.status === 'fulfilled' ? sessions.value.sessions.length : null,
  };
}

export function ManifestBadge({ project }: { project: Project }) {
  // no file: the default branch has neither svc.yaml nor svc.toml
  if (!project.manifest?.file) return <span class="muted">no manifest</span>;
  return project.manifest.valid ? <span class="ok">valid</span> : <span class="bad">invalid ({project.manifest.issues.length})</span>;
}

export function ProjectsPage() {
  const loaded = useLoad(async () => {
    const { projects } = await api<{ projects: Project[] }>('GET', '/projects');
    const counts = await Promise.all(projects.map(countsOf));
    return projects.map((project, i) => ({ project, counts: counts[i]! }));
  }, 'projects');
  return (
    <main>
      <h1>Projects</h1>
      <Show loaded={loaded} what="projects">{(rows) => rows.length === 0 ? (
        <p>No projects yet. Create one with <code>svc projects create NAME --repo URL</code>.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead><tr><th>Name</th><th>Repository</th><th>Default branch</th><th>Manifest</th><th>Triggers</th><th>Open CRs</th><th>Running sessions</th></tr></thead>
            <tbody>
              {rows.map(({ project, counts }) => (
                <tr key={project.id}>
                  <td><a href={href(['projects', project.id])}>{project.name}</a></td>
                  <td class="wrap"><code>{project.repo_url}</code></td>
                  <td><code>{project.default_branch}</code> <Sha sha={project.default_branch_sha} /></td>
                  <td><ManifestBadge project={project} /></td>
                  <td>{project.triggers.length}</td>
                  <td>{counts.openCrs === null ? '—' : <a href={href(['projects', project.id, 'change-requests'])}>{counts.openCrs}</a>}</td>
                  <td>{counts.runningSessions === null ? '—' : <a href={href(['projects', project.id, 'sessions'])}>{counts.runningSessions}</a>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</Show>
    </main>
  );
}

export function ProjectPage({ project }: { project: Project }) {
  const manifest = project.manifest;
  return (
    <main>
      <h1>{project.name}</h1>
      {project.description ? <p>{project.description}</p> : null}
      <dl class="facts">
        <dt>Repository</dt><dd><code>{project.repo_url}</code></dd>
        <dt>Default branch</dt><dd><code>{project.default_branch}</code> at <Sha sha={project.default_branch_sha} /></dd>
        <dt>Manifest</dt><dd>{manifest?.file ? <>{manifest.file} (version {manifest.version ?? '?'}): <ManifestBadge project={project} /></> : 'none on the default branch'}</dd>
        <dt>Triggers</dt><dd>{project.triggers.length ? project.triggers.map((t) => t.slug).join(', ') : 'none'}</dd>
        <dt>Created</dt><dd><Age at={project.created_at} /></dd>
      </dl>
      {manifest && manifest.issues.length ? (
        <section><h2>Manifest issues</h2><IssueList issues={manifest.issues} /></section>
      ) : null}
      {project.trigger_errors.length ? (
        <section>
          <h2>Trigger errors</h2>
          <ul class="issues">
            {project.trigger_errors.map((e) => (
              <li key={e.index}><code>triggers[{e.index}]</code>{e.slug ? <> (<code>{e.slug}</code>)</> : null}: {e.messages.join('; ')}</li>
            ))}
          </ul>
        </section>
      ) : null}
      <section>
        <h2>Conditions</h2>
        <div class="table-wrap">
          <table>
            <thead><tr><th>Type</th><th>Status</th><th>Reason</th><th>Message</th><th>Since</th></tr></thead>
            <tbody>
              {project.conditions.map((c) => (
                <tr key={c.type}><td>{c.type}</td><td>{c.status}</td><td>{c.reason}</td><td class="wrap">{c.message}</td><td><Age at={c.lastTransitionTime} /></td></tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </main>
  );
}
