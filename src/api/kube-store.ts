// The project routes' store over the cluster: reads from informer caches (synced before the API
// reports ready), writes through the client. Kubernetes errors become API errors here.
import { Informer, isAlreadyExists, isInvalid, type KubeClient } from '../kube/index.js';
import { controllerOf, PROJECT, SECRET, TRIGGER, type Project, type Trigger } from '../resources/index.js';
import { ApiError } from './errors.js';
import type { ProjectStore, SerializedTrigger } from './projects/index.js';
import type { StoredSecret, TokenSecretReader } from './tokens.js';

/** A Trigger as the REST API shows it: the normalized manifest entry (snake_case) and its runtime state. */
export function serializeTrigger(trigger: Trigger): SerializedTrigger {
  const s = trigger.spec;
  const out: SerializedTrigger = {
    slug: s.slug, type: s.type, name: s.name, prompt: s.prompt, agent: s.agent,
    session_mode: s.sessionMode, enabled: s.enabled, timezone: s.timezone,
  };
  if (s.model !== undefined) out.model = s.model;
  if (s.cron !== undefined) out.cron = s.cron;
  if (s.runAt !== undefined) out.run_at = s.runAt;
  if (s.secretEnv !== undefined) out.secret_env = s.secretEnv;
  out.last_fired_at = trigger.status?.lastFiredAt ?? null;
  out.next_fire_at = trigger.status?.nextFireAt ?? null;
  return out;
}

export interface KubeProjectStore extends ProjectStore {
  start(): Promise<void>;
  stop(): Promise<void>;
  hasSynced(): boolean;
  /** uids of the Projects in the cache */
  projectUids(): Set<string>;
  onProjectDeleted(handler: () => void): void;
}

export function kubeProjectStore(client: KubeClient, namespace: string): KubeProjectStore {
  const projects = new Informer<Project>(client, PROJECT, { namespace });
  const triggers = new Informer<Trigger>(client, TRIGGER, { namespace });
  const projectClient = client.resource<Project>(PROJECT);
  return {
    async start() { await Promise.all([projects.start(), triggers.start()]); },
    async stop() { await Promise.all([projects.stop(), triggers.stop()]); },
    hasSynced: () => projects.hasSynced() && triggers.hasSynced(),
    projectUids: () => new Set(projects.list().map((p) => p.metadata.uid!)),
    onProjectDeleted: (handler) => projects.on('delete', () => handler()),
    async listProjects(ns) {
      return projects.list(ns).map((p) => projectClient.decode(p));
    },
    async createProject(project) {
      try {
        return await projectClient.create(project);
      } catch (error) {
        if (isAlreadyExists(error)) throw new ApiError(409, `project ${project.metadata.name} already exists in namespace ${project.metadata.namespace}`);
        if (isInvalid(error)) throw new ApiError(400, `the cluster refused the project: ${(error as Error).message}`);
        throw error;
      }
    },
    async listTriggers(ns) {
      const byProject = new Map<string, SerializedTrigger[]>();
      for (const trigger of triggers.list(ns)) {
        const owner = controllerOf(trigger);
        if (owner?.kind !== PROJECT.kind) continue;
        byProject.set(owner.uid, [...(byProject.get(owner.uid) ?? []), serializeTrigger(trigger)]);
      }
      return byProject;
    },
  };
}

/** Reads token Secrets by name from the operator's namespace. */
export function kubeTokenSecretReader(client: KubeClient, namespace: string): TokenSecretReader {
  const secrets = client.resource(SECRET);
  return async (name) => (await secrets.find(namespace, name)) as StoredSecret | undefined;
}
