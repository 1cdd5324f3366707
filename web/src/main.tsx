// The dashboard shell: sign-in gate, header with the project's sections, and the hash router.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, storedToken, storeToken, whenUnauthorized, type Me } from './api.js';
import { ChangeRequestPage, ChangeRequestsPage } from './pages/change-requests.js';
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
          ? <ChangeRequestPage project={{ id: projectId }} crId={route.path[3]} me={me} />
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
 * `#/projects/<name>/...`: the API knows a project by its id, but people know it by the name the
 * CLI and kubectl take; a link typed or shared with the name turns into the id's, the rest kept.
 */
function ProjectByName({ name, route }: { name: string; route: Route }) {
  const found = useLoad(async () => {
    const { projects } = await api<{ projects: Project[] }>('GET', '/projects');
    const project = projects.find((p) => p.name === name);
    if (!project) throw new Error(`there is no project named ${JSON.stringify(name)} that this token can see`);
    return project.id;
  }, name);
  useEffect(() => {
    if (found.data) location.replace(href(['projects', found.data, ...route.path.slice(2)], Object.fromEntries(route.query)));
  }, [found.data]);
  return <main><Show loaded={found} what={`the project ${name}`}>{() => <Loading what={`the project ${name}`} />}</Show></main>;
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
          : <ProjectByName name={route.path[1]} route={route} />
        : <ProjectsPage />}
    </>
  );
}

render(<App />, document.getElementById('app')!);
