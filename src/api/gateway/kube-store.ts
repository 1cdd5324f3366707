// GatewayStore over the Kubernetes API: label-selected informers of the project namespace for the
// data path (Session Secrets, provider Secrets, usage ledgers) plus the API's shared cache
// (Projects, Sessions, Triggers); writes and fresh reads through the client.
import { Informer, isAlreadyExists, isConflict, isNotFound, type KubeCache, type KubeClient } from '../../kube/index.js';
import {
  CONFIG_MAP, LABEL_LLM_PROVIDERS, LABEL_LLM_USAGE, PROJECT, SECRET, SESSION, SESSION_TOKEN_SECRETS, TRIGGER,
  llmLedgerName, llmProvidersSecretName, sessionSecretName, sessionTokens,
  type ConfigMapObject, type LlmProvidersSecret, type Project, type Session, type SessionSecret, type Trigger,
} from '../../resources/index.js';
import { GatewayWriteConflict, type GatewayStore } from './store.js';
import { projectLookup, type FindProject } from '../project-lookup.js';

export interface KubeGatewayStore extends GatewayStore {
  start(): Promise<void>;
  stop(): Promise<void>;
  hasSynced(): boolean;
}

export function kubeGatewayStore(client: KubeClient, cache: KubeCache, namespace: string, options: { findProject?: FindProject } = {}): KubeGatewayStore {
  const projects = cache.resource<Project>(PROJECT);
  const sessions = cache.resource<Session>(SESSION);
  const triggers = cache.resource<Trigger>(TRIGGER);
  // own informers: a label selector each, so the API holds these Secrets and nothing else of the namespace
  // (of a session's Secrets, those with its tokens: not the log a failed one keeps)
  const sessionSecrets = new Informer<SessionSecret>(client, SECRET, { namespace, labelSelector: SESSION_TOKEN_SECRETS });
  const providerSecrets = new Informer<LlmProvidersSecret>(client, SECRET, { namespace, labelSelector: `${LABEL_LLM_PROVIDERS}=true` });
  const ledgers = new Informer<ConfigMapObject>(client, CONFIG_MAP, { namespace, labelSelector: `${LABEL_LLM_USAGE}=ledger` });
  const own = [sessionSecrets, providerSecrets, ledgers];
  const configMaps = client.resource<ConfigMapObject>(CONFIG_MAP);
  const secrets = client.resource<LlmProvidersSecret>(SECRET);

  async function write(what: () => Promise<unknown>): Promise<void> {
    try {
      await what();
    } catch (error) {
      if (isConflict(error) || isAlreadyExists(error)) throw new GatewayWriteConflict((error as Error).message);
      throw error;
    }
  }

  return {
    start: async () => { await Promise.all(own.map((i) => i.start())); },
    stop: async () => { await Promise.all(own.map((i) => i.stop())); },
    hasSynced: () => own.every((i) => i.hasSynced()),

    findProject: options.findProject ?? projectLookup(client, cache),
    cachedProjectByName: (ns, name) => projects.get(ns, name),
    cachedSession: (ns, id) => sessions.get(ns, id),
    cachedSandboxToken: (ns, id) => sessionTokens(sessionSecrets.get(ns, sessionSecretName(id)))?.sandboxToken,
    cachedProviders: (project) => providerSecrets.get(project.metadata.namespace, llmProvidersSecretName(project)),
    cachedLedger: (project) => ledgers.get(project.metadata.namespace, llmLedgerName(project)),
    cachedTriggerSlug: (ns, name) => triggers.get(ns, name)?.spec.slug ?? null,

    readProviders: (project) => secrets.find(project.metadata.namespace!, llmProvidersSecretName(project)),
    writeProviders: (secret) => write(() => (secret.metadata.resourceVersion ? secrets.replace(secret) : secrets.create(secret))),
    readConfigMap: (ns, name) => configMaps.find(ns, name),
    writeConfigMap: (cm) => write(() => (cm.metadata.resourceVersion ? configMaps.replace(cm) : configMaps.create(cm))),
    async createOnce(cm) {
      try {
        await configMaps.create(cm);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    },
    async deleteConfigMap(ns, name) {
      try {
        await configMaps.delete(ns, name);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
    recordEvent: (obj, event) => client.recordEvent(obj, event),
  };
}
