// The project routes' store over the cluster: reads from the cache (synced before the API
// reports ready), writes through the client. Kubernetes errors become API errors here.
import { isAlreadyExists, isInvalid, KubeCache, type KubeClient } from '../kube/index.js';
import { PROJECT, SECRET, TRIGGER, type Project, type Trigger } from '../resources/index.js';
import { ApiError } from './errors.js';
import { projectLookup, projectShown, type FindProject } from './project-lookup.js';
import type { ProjectStore } from './projects/index.js';
import type { StoredSecret, TokenSecretReader } from './tokens.js';

export interface KubeProjectStore extends ProjectStore {
  /** The API's cache (Projects and Triggers of its namespace); other readers may add kinds. */
  readonly cache: KubeCache;
  /** The one Project-by-uid lookup (project-lookup.ts) over this cache, for the other route groups' stores. */
  readonly findProject: FindProject;
  start(): Promise<void>;
  stop(): Promise<void>;
  hasSynced(): boolean;
}

export function kubeProjectStore(client: KubeClient, namespace: string): KubeProjectStore {
  const cache = new KubeCache(client, { namespace });
  const projects = cache.resource<Project>(PROJECT);
  const triggers = cache.resource<Trigger>(TRIGGER);
  const findProject = projectLookup(client, cache);
  return {
    cache,
    findProject,
    start: () => cache.start(),
    stop: () => cache.stop(),
    hasSynced: () => cache.hasSynced(),
    listProjects: async (ns) => projects.list(ns).filter(projectShown),
    getProject: findProject,
    async createProject(project) {
      try {
        return await projects.create(project);
      } catch (error) {
        if (isAlreadyExists(error)) throw new ApiError(409, `project ${project.metadata.name} already exists in namespace ${project.metadata.namespace}`);
        if (isInvalid(error)) throw new ApiError(400, `the cluster refused the project: ${(error as Error).message}`);
        throw error;
      }
    },
    triggersOf: async (project) => triggers.ownedBy(project),
    // background: the Project's finalizer deletes its Sessions (their refs leave the repository) before garbage collection takes its change requests
    deleteProject: (project) => projects.delete(project, { propagationPolicy: 'Background' }),
  };
}

/** Reads token Secrets by name from the operator's namespace. */
export function kubeTokenSecretReader(client: KubeClient, namespace: string): TokenSecretReader {
  const secrets = client.resource(SECRET);
  return async (name) => (await secrets.find(namespace, name)) as StoredSecret | undefined;
}
