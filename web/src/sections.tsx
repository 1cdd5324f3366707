// The project sections beyond its overview and change requests (sessions, triggers, secrets).
import type { JSX } from 'preact';
import type { Me } from './api.js';
import type { Project } from './pages/projects.js';
import type { Route } from './router.js';

export const PROJECT_SECTIONS: [string, string][] = [['change-requests', 'Change requests']];

export function projectSection(_section: string, _project: Project, _route: Route, _me: Me): JSX.Element | null {
  return null;
}
