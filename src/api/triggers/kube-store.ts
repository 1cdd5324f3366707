// The trigger store over the cluster: informer caches for reads (synced before the API is
// ready), the client for writes. A fire create that meets an existing name reads it back live.
import { Informer, isAlreadyExists, type KubeClient } from '../../kube/index.js';
import {
  NAMESPACE, PROJECT, RESUME_ANNOTATION, SECRET, SESSION, TRIGGER, TRIGGER_FIRE, controllerOf, defaultSessionCap, sessionCap,
  type KubeObject, type Project, type Session, type Trigger, type TriggerFire,
} from '../../resources/index.js';
import type { TriggerStore } from './store.js';

export interface KubeTriggerStore extends TriggerStore {
  start(): Promise<void>;
  stop(): Promise<void>;
  hasSynced(): boolean;
}

type SecretObject = KubeObject & { data?: Record<string, string> };

export function kubeTriggerStore(client: KubeClient, namespace: string, options: { defaultCap?: number } = {}): KubeTriggerStore {
  const defaultCap = options.defaultCap ?? defaultSessionCap();
  const projects = new Informer<Project>(client, PROJECT, { namespace });
  const triggers = new Informer<Trigger>(client, TRIGGER, { namespace });
  const fires = new Informer<TriggerFire>(client, TRIGGER_FIRE, { namespace });
  const sessions = new Informer<Session>(client, SESSION, { namespace });
  const secrets = new Informer<SecretObject>(client, SECRET, { namespace });
  const namespaces = new Informer<KubeObject>(client, NAMESPACE, { fieldSelector: `metadata.name=${namespace}` });
  const all = [projects, triggers, fires, sessions, secrets, namespaces] as Informer<KubeObject>[];
  const fireClient = client.resource<TriggerFire>(TRIGGER_FIRE);
  const triggerClient = client.resource<Trigger>(TRIGGER);
  const projectClient = client.resource<Project>(PROJECT);
  const sessionClient = client.resource<Session>(SESSION);
  return {
    async start() { await Promise.all(all.map((i) => i.start())); },
    async stop() { await Promise.all(all.map((i) => i.stop())); },
    hasSynced: () => all.every((i) => i.hasSynced()),
    project(ns, uid) {
      const found = projects.list(ns).find((p) => p.metadata.uid === uid);
      return found && projectClient.decode(found);
    },
    triggers(project) {
      return triggers.list(project.metadata.namespace)
        .filter((t) => controllerOf(t)?.uid === project.metadata.uid)
        .map((t) => triggerClient.decode(t));
    },
    secretValue(ns, secretName, key) {
      const value = secrets.get(ns, secretName)?.data?.[key];
      return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
    },
    sessions: (ns) => sessions.list(ns).map((s) => sessionClient.decode(s)),
    fires: (ns) => fires.list(ns),
    cap: (ns) => sessionCap(namespaces.get(undefined, ns)?.metadata.annotations, defaultCap),
    async createFire(fire) {
      try {
        return { created: await fireClient.create(fire) };
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        return { existing: await fireClient.get(fire.metadata.namespace!, fire.metadata.name!) };
      }
    },
    resume: (trigger, token) => triggerClient.mergePatch(trigger.metadata.namespace!, trigger.metadata.name!, { metadata: { annotations: { [RESUME_ANNOTATION]: token } } }),
    recordEvent: (obj, event) => client.recordEvent(obj, event),
  };
}
