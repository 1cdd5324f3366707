// The projects route group (SPEC §4, docs/api.md): bearer auth, JSON bodies, under /v1/projects.
import type { RouteGroup } from '../groups.js';
import { projectRoutes, type ProjectRoutesConfig, type ProjectStore } from './routes.js';

export {
  parseCreateProject, projectResource, projectRoutes, serializeProject, serializeTrigger,
  type CreateProjectRequest, type ProjectRoutesConfig, type ProjectStore, type SerializedProject, type SerializedTrigger,
} from './routes.js';

export function projectsGroup(store: ProjectStore, config: ProjectRoutesConfig): RouteGroup {
  return { path: '/v1/projects', auth: 'bearer', body: 'json', router: projectRoutes(store, config) };
}
