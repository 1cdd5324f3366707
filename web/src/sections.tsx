// The project sections beyond its overview and change requests (sessions, triggers, secrets, model usage).
import type { JSX } from 'preact';
import type { Me } from './api.js';
import type { Project } from './pages/projects.js';
import { SecretsPage } from './pages/secrets.js';
import { SessionPage, SessionsPage } from './pages/sessions.js';
import { TriggersPage } from './pages/triggers.js';
import { UsagePage } from './pages/usage.js';
import type { Route } from './router.js';

export const PROJECT_SECTIONS: [string, string][] = [
  ['change-requests', 'Change requests'],
  ['sessions', 'Sessions'],
  ['triggers', 'Triggers'],
  ['secrets', 'Secrets'],
  ['usage', 'Model usage'],
];

export function projectSection(section: string, project: Project, route: Route, me: Me): JSX.Element | null {
  if (section === 'sessions') {
    return route.path[3]
      ? <SessionPage project={project} sessionId={route.path[3]} me={me} />
      : <SessionsPage project={project} me={me} status={route.query.get('status') ?? 'all'} />;
  }
  if (section === 'triggers') return <TriggersPage project={project} me={me} />;
  if (section === 'secrets') return <SecretsPage project={project} me={me} />;
  if (section === 'usage') return <UsagePage project={project} range={route.query.get('range') ?? '7d'} />;
  return null;
}
