// The trigger store over the cluster: Projects (the one lookup), Triggers, TriggerFires, Sessions
// and the delivery ledger pages from the API's shared cache (synced before the API is ready),
// each read by key or by index; the webhook secret and the Namespace's cap annotation read live
// (GET), then served from memory for a second and refreshed behind it for two more (shortLived).
// A fire create that meets an existing name reads that fire back live.
import { isAlreadyExists, isNotFound, type KubeCache } from '../../kube/index.js';
import { projectLookup, type FindProject } from '../project-lookup.js';
import {
  DELIVERY_LEDGER, LABEL_TRIGGER, LEDGER_ENTRY_INDEX, NAMESPACE, PENDING_FIRES_INDEX, RESUME_ANNOTATION, SECRET, SESSION, SLOT_HOLDERS_INDEX, TRIGGER, TRIGGER_FIRE,
  defaultSessionCap, fireAnswer, ledgerAnswer, sessionCap,
  type ConfigMapObject, type FireAnswer, type KubeObject, type Session, type Trigger, type TriggerFire,
} from '../../resources/index.js';
import type { TriggerStore } from './store.js';

type SecretObject = KubeObject & { data?: Record<string, string> };

/**
 * Live reads kept briefly: the first read of a key waits; a later one within `ttlMs` gets the
 * last value at once; one within `staleMs` gets it too while a refresh runs behind it (a burst of
 * deliveries costs no extra round trip); an older one waits for a fresh read. So a rotated secret
 * or a changed cap is seen within `staleMs` (3 s), also by the first delivery after a quiet hour:
 * a secret set after a 409 works for the next redelivery. A key not asked for in `idleMs` is
 * forgotten (a deleted project's secrets are not kept).
 */
export function shortLived<T>(read: (namespace: string, name: string) => Promise<T>, options: { ttlMs?: number; staleMs?: number; idleMs?: number; clock?: () => number } = {}) {
  const { ttlMs = 1000, staleMs = 3 * ttlMs, idleMs = 10 * 60_000, clock = Date.now } = options;
  /** `value`: the last value read (or the first read, in flight); `loading`: a refresh in flight. */
  const memo = new Map<string, { at: number; used: number; value: Promise<T>; loading?: Promise<T> }>();
  let swept = clock();
  const forgetIdle = (now: number) => {
    if (now - swept < idleMs) return;
    swept = now;
    for (const [key, entry] of memo) if (now - entry.used >= idleMs) memo.delete(key);
  };
  const load = (key: string, namespace: string, name: string) => {
    const value = read(namespace, name);
    value.then(() => memo.set(key, { at: clock(), used: memo.get(key)?.used ?? clock(), value }), () => memo.delete(key));
    return value;
  };
  return (namespace: string, name: string): Promise<T> => {
    const now = clock();
    forgetIdle(now);
    const key = `${namespace}/${name}`;
    const hit = memo.get(key);
    if (!hit) {
      const value = load(key, namespace, name);
      memo.set(key, { at: now, used: now, value, loading: value });
      return value;
    }
    hit.used = now;
    const age = now - hit.at;
    if (age < ttlMs) return hit.value;
    hit.loading ??= load(key, namespace, name);
    if (age < staleMs) {
      hit.loading.catch(() => {}); // a failed background refresh: the next read waits for its own
      return hit.value;
    }
    return hit.loading;
  };
}

/** How long the answer of a delivery fire seen deleted is kept, until its ledger page reaches the cache. */
const JUST_DELETED_MS = 60_000;

/**
 * Answers of delivery fires this process saw deleted (pruned) in the last minute. The ledger page
 * that records one is written before the fire is deleted, but it comes through another watch,
 * which may be a moment behind. Oldest first (a Map keeps insertion order), so expiry is cheap.
 */
function justDeleted(ttlMs = JUST_DELETED_MS, clock: () => number = Date.now) {
  const answers = new Map<string, { answer: FireAnswer; until: number }>();
  const expire = () => {
    for (const [key, entry] of answers) {
      if (entry.until > clock()) break;
      answers.delete(key);
    }
  };
  return {
    remember(fire: TriggerFire) {
      expire();
      answers.set(`${fire.metadata.namespace}/${fire.metadata.name}`, { answer: fireAnswer(fire), until: clock() + ttlMs });
    },
    answer(namespace: string, name: string): FireAnswer | undefined {
      expire();
      return answers.get(`${namespace}/${name}`)?.answer;
    },
  };
}

export function kubeTriggerStore(cache: KubeCache, options: { defaultCap?: number; findProject?: FindProject } = {}): TriggerStore {
  const defaultCap = options.defaultCap ?? defaultSessionCap();
  const triggers = cache.resource<Trigger>(TRIGGER);
  const fires = cache.resource<TriggerFire>(TRIGGER_FIRE);
  const sessions = cache.resource<Session>(SESSION);
  const ledger = cache.resource<ConfigMapObject>(DELIVERY_LEDGER);
  const deleted = justDeleted();
  fires.informer.on('delete', (fire) => { if (fire.spec.deliveryId) deleted.remember(fire); });
  const secretClient = cache.client.resource<SecretObject>(SECRET);
  const namespaceClient = cache.client.resource<KubeObject>(NAMESPACE);
  const getSecret = async (ns: string, name: string) => {
    try { return await secretClient.get(ns, name); } catch (error) { if (isNotFound(error)) return undefined; throw error; }
  };
  const readSecret = shortLived(getSecret);
  const readNamespace = shortLived(async (_ns, name) => namespaceClient.find('', name));
  return {
    findProject: options.findProject ?? projectLookup(cache.client, cache),
    // the informer decodes every object it stores (defaults applied)
    triggers: (project) => triggers.ownedBy(project),
    async secretValue(ns, secretName, key) {
      const value = (await readSecret(ns, secretName))?.data?.[key];
      return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
    },
    async setSecretKeys(ns, secretName) {
      return new Set(Object.entries((await getSecret(ns, secretName))?.data ?? {}).filter(([, value]) => value !== '').map(([key]) => key));
    },
    slotHolders: (ns) => sessions.indexed(SLOT_HOLDERS_INDEX, ns),
    sessionsOf: (trigger) => sessions.withLabel(LABEL_TRIGGER, trigger.metadata.name!, trigger.metadata.namespace),
    pendingFires: (ns) => fires.indexed(PENDING_FIRES_INDEX, ns),
    fire: (ns, name) => fires.get(ns, name),
    firesOf: (trigger) => fires.ownedBy(trigger),
    prunedAnswer: (ns, name) => ledgerAnswer(ledger.indexed(LEDGER_ENTRY_INDEX, `${ns}/${name}`), name) ?? deleted.answer(ns, name),
    readFire: (ns, name) => fires.client.find(ns, name),
    readSession: (ns, name) => sessions.client.find(ns, name),
    cap: async (ns) => sessionCap((await readNamespace('', ns))?.metadata.annotations, defaultCap),
    async createFire(fire) {
      try {
        return { created: await fires.create(fire) };
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        return { existing: await fires.client.get(fire.metadata.namespace!, fire.metadata.name!) };
      }
    },
    resume: (trigger, token) => triggers.mergePatch(trigger.metadata.namespace!, trigger.metadata.name!, { metadata: { annotations: { [RESUME_ANNOTATION]: token } } }),
    recordEvent: (obj, event) => cache.client.recordEvent(obj, event),
  };
}
