// The dashboard shell: sign-in gate, header with the project's sections, and the hash router.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, storedToken, storeToken, whenUnauthorized, type Me } from './api.js';
import { ChangeRequestPage, ChangeRequestsPage } from './pages/change-requests.js';
import type { SerializedChangeRequest } from '../../src/lib/rest-shapes.js';
import { UUID } from '../../src/lib/uuid.js';
import { ProjectPage, ProjectsPage, type Project } from './pages/projects.js';
import { SignIn } from './pages/signin.js';
import { href, useRoute, type Route } from './router.js';
import { ErrorBox, Loading, Show, useLoad } from './ui.js';
import { PROJECT_SECTIONS, projectSection } from './sections.js';
import './style.css';

function ProjectArea({ projectId, route, me }: { projectId: string; route: Route; me: Me }) {
  const loaded = useLoad(() => api<{ project: Project }>('GET', `/projects/${encodeURIComponent(projectId)}`).then((b) => b.project), projectId);
  const section = route.path[2] ?? '';
  return (
    <>
      <nav class="sections" aria-label="Project">
        <a href={href(['projects', projectId])} aria-current={section === '' ? 'page' : undefined}>{loaded.data?.name ?? 'Project'}</a>
        {PROJECT_SECTIONS.map(([slug, label]) => (
          <a key={slug} href={href(['projects', projectId, slug])} aria-current={section === slug ? 'page' : undefined}>{label}</a>
        ))}
      </nav>
      {section === 'change-requests' ? (
        route.path[3]
          ? UUID.test(route.path[3])
            ? <ChangeRequestPage project={{ id: projectId }} crId={route.path[3]} me={me} />
            : <ResolvedLink what="the change request" resolve={() => crPathByNumber(projectId, route.path[3]!)} route={route} />
          : <ChangeRequestsPage project={{ id: projectId }} status={route.query.get('status') ?? 'open'} />
      ) : (
        <Show loaded={loaded} what="the project">{(project) => section === ''
          ? <ProjectPage project={project} />
          : projectSection(section, project, route, me) ?? <main><p>No such page.</p></main>}</Show>
      )}
    </>
  );
}

/**
 * A link that names something as people do (a project by its name, as the CLI and kubectl take
 * it; a change request by its number, as `svc cr show 3`): the API knows them by id, so it is
 * looked up and the link replaced by the id's, its query kept.
 */
function ResolvedLink({ what, resolve, route }: { what: string; resolve: () => Promise<string[]>; route: Route }) {
  const found = useLoad(resolve, route.path.join('/'));
  useEffect(() => {
    if (found.data) location.replace(href(found.data, Object.fromEntries(route.query)));
  }, [found.data]);
  return <main><Show loaded={found} what={what}>{() => <Loading what={what} />}</Show></main>;
}

async function projectPathByName(name: string, rest: string[]): Promise<string[]> {
  const { projects } = await api<{ projects: Project[] }>('GET', '/projects');
  const project = projects.find((p) => p.name === name);
  if (!project) throw new Error(`there is no project named ${JSON.stringify(name)} that this token can see`);
  return ['projects', project.id, ...rest];
}

async function crPathByNumber(projectId: string, ref: string): Promise<string[]> {
  const number = /^#?([1-9]\d*)$/.exec(ref)?.[1];
  if (!number) throw new Error(`${JSON.stringify(ref)} is not a change request: give its number (3) or its id`);
  const { change_requests: crs } = await api<{ change_requests: SerializedChangeRequest[] }>('GET', `/projects/${encodeURIComponent(projectId)}/change-requests?status=all`);
  const cr = crs.find((c) => c.number === Number(number));
  if (!cr) throw new Error(`there is no change request #${number} in this project`);
  return ['projects', projectId, 'change-requests', cr.cr_id];
}

function App() {
  const [token, setToken] = useState(storedToken);
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<unknown>(null);
  const route = useRoute();

  // why the API signed this tab out (a token revoked or expired while in use), said on the sign-in page
  const [signedOutBecause, setSignedOutBecause] = useState<string | null>(null);
  const signOut = () => { storeToken(null); setToken(null); setMe(null); };
  useEffect(() => { whenUnauthorized((why) => { signOut(); setSignedOutBecause(why); }); }, []);
  useEffect(() => {
    if (token && !me) api<Me>('GET', '/me').then(setMe, setError);
  }, [token, me]);

  if (!token) return <SignIn notice={signedOutBecause} onSignedIn={(t, m) => { storeToken(t); setToken(t); setMe(m); setSignedOutBecause(null); }} />;
  if (!me) return error ? <main><ErrorBox error={error} title="Could not reach the API" /><button type="button" onClick={signOut}>Sign out</button></main> : <Loading what="your access" />;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">svc</a>
        <a href="#/">Projects</a>
        <span class="who muted" title={me.user_id}>{me.access === 'write' ? 'read and write' : 'read only'}{me.project_id ? ' · one project' : ''}</span>
        <button type="button" class="secondary" onClick={signOut}>Sign out</button>
      </header>
      {route.path[0] === 'projects' && route.path[1]
        ? UUID.test(route.path[1])
          ? <ProjectArea projectId={route.path[1]} route={route} me={me} />
          : <ResolvedLink what={`the project ${route.path[1]}`} resolve={() => projectPathByName(route.path[1]!, route.path.slice(2))} route={route} />
        : <ProjectsPage />}
    </>
  );
}

render(<App />, document.getElementById('app')!);
