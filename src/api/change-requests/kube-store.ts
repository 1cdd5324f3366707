// ChangeRequestStore over the Kubernetes API. Reads go to the API server (not an informer
// cache), so a client sees its own writes at once. Numbers: Project status
// lastChangeRequestNumber, raised by compare-and-swap (docs/change-requests.md).
import { isAlreadyExists, isConflict, readGitCredentials, readSecretData, retryOnConflict, withConflictError, type KubeClient } from '../../kube/index.js';
import type { GitCredentials } from '../../git/index.js';
import {
  CHANGE_REQUEST, LABEL_PROJECT, NAMESPACE, PROJECT, REFRESH_ANNOTATION, SESSION, isValidName,
  type ChangeRequest, type Project,
} from '../../resources/index.js';
import { randomUUID } from 'node:crypto';
import { Lru } from '../../lib/lru.js';
import { KeyedRateLimiter } from '../../lib/rate-limit.js';
import { projectLookup, type FindProject } from '../project-lookup.js';
import { CredentialsUnavailableError, NumberTakenError, type ChangeRequestStore } from './store.js';

const COUNTER_ATTEMPTS = 100;

export interface KubeChangeRequestStoreOptions {
  /** The API's one Project lookup (project-lookup.ts); default: the same rule over live reads. */
  findProject?: FindProject;
  now?: () => number;
}

/** Lists of a project's change requests for an id this replica has not seen: 20 at once, then 10 a second. */
export const UNSEEN_ID_LISTS = { burst: 20, perSecond: 10 };

export function kubeChangeRequestStore(client: KubeClient, options: KubeChangeRequestStoreOptions = {}): ChangeRequestStore {
  const projects = client.resource<Project>(PROJECT);
  const crs = client.resource<ChangeRequest>(CHANGE_REQUEST);
  const accounts = new Map<string, string>();

  const ownedBy = (project: Project) => (cr: ChangeRequest) =>
    cr.metadata.ownerReferences?.some((ref) => ref.uid === project.metadata.uid) ?? cr.spec.projectRef.name === project.metadata.name;

  // The name of each change request seen, by uid (cr_id): one is read by name, live, rather than
  // by listing every change request of its project, as each REST call on one did.
  const names = new Lru<string>(10_000);
  const remember = (cr: ChangeRequest) => { if (cr.metadata.uid) names.set(cr.metadata.uid, cr.metadata.name!); return cr; };

  const missListing = new KeyedRateLimiter({ ...UNSEEN_ID_LISTS, maxKeys: 1_000, now: options.now });

  const list = async (project: Project) => {
    const { items } = await crs.list(project.metadata.namespace, { labelSelector: `${LABEL_PROJECT}=${project.metadata.name}` });
    return items.filter(ownedBy(project)).map(remember);
  };

  return {
    findProject: options.findProject ?? projectLookup(client),

    async accountId(namespace) {
      const known = accounts.get(namespace);
      if (known) return known;
      try {
        const uid = (await client.resource(NAMESPACE).get('', namespace)).metadata.uid;
        if (uid) accounts.set(namespace, uid);
        return uid ?? null;
      } catch {
        return null; // RBAC without namespaces/get: account_id is null (docs/change-requests.md)
      }
    },

    async gitCredentials(project): Promise<GitCredentials | null> {
      const lookup = await readGitCredentials(project, (namespace, name) => readSecretData(client, namespace, name));
      if (!lookup.ok) throw new CredentialsUnavailableError(lookup.message);
      return lookup.credentials;
    },

    async sessionExists(namespace, sessionId) {
      if (!isValidName(sessionId)) return false;
      return (await client.resource(SESSION).find(namespace, sessionId)) !== undefined;
    },

    list,

    async get(project, crId) {
      const name = names.get(crId);
      const named = name === undefined ? undefined : await crs.find(project.metadata.namespace!, name);
      if (named?.metadata.uid === crId) return ownedBy(project)(named) ? named : undefined;
      // Not seen yet, or its name now holds another (deleted and made again): the list finds it.
      // Any reader can name an id nobody made, so those lists are rate-limited per project; past
      // the limit such an id is not found (one listed since, or named by this replica, still is).
      if (!missListing.take(project.metadata.uid!).allowed) return undefined;
      return (await list(project)).find((cr) => cr.metadata.uid === crId);
    },

    async reserveNumber(project) {
      try {
        return await retryOnConflict(async () => {
          const current = await projects.get(project.metadata.namespace!, project.metadata.name!);
          const next = (current.status?.lastChangeRequestNumber ?? 0) + 1;
          await projects.replaceStatus({ ...current, status: { ...current.status, lastChangeRequestNumber: next } });
          return next;
        }, { attempts: COUNTER_ATTEMPTS });
      } catch (error) {
        if (isConflict(error)) throw new Error(`could not take a change-request number for project ${project.metadata.name}: too many concurrent writers`);
        throw error;
      }
    },

    async create(_project, cr, status) {
      let created: ChangeRequest;
      try {
        created = await crs.create(cr);
      } catch (error) {
        if (isAlreadyExists(error)) throw new NumberTakenError(cr.spec.number);
        throw error;
      }
      try {
        return remember(await crs.replaceStatus({ ...created, status }));
      } catch (error) {
        // Nothing half-written: a CR without its status is removed again.
        await crs.delete(created.metadata.namespace!, created.metadata.name!, { uid: created.metadata.uid }).catch(() => undefined);
        throw error;
      }
    },

    writeStatus: (cr, status) => withConflictError(`change request ${cr.metadata.name}`, () => crs.replaceStatus({ ...cr, status })),

    writeSpec: (cr, spec) => withConflictError(`change request ${cr.metadata.name}`, () => crs.replace({ ...cr, spec })),

    recordEvent: (cr, event) => client.recordEvent(cr, event),

    async requestProjectRefresh(project) {
      await projects.mergePatch(project.metadata.namespace!, project.metadata.name!, { metadata: { annotations: { [REFRESH_ANNOTATION]: randomUUID() } } });
    },
  };
}
