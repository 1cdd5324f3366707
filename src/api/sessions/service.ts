// The session domain of the API (issue 10, DESIGN §4): start (agent from the manifest, the
// account's cap), list, get, stop, follow-up prompts that wake a stopped session, the engine
// proxy's target, and request-changes feedback. The API writes Session spec and annotations
// only; the Session controller does the rest and is the only writer of the status.
import { randomUUID } from 'node:crypto';
import { openMirror, type Mirror } from '../../git/index.js';
import { Lru } from '../../lib/lru.js';
import { retryOnConflict } from '../../kube/index.js';
import { KeyedBatcher } from '../../lib/keyed-mutex.js';
import { MANIFEST_FILES, MANIFEST_MAX_BYTES, readManifestDocumentAt } from '../../manifest/index.js';
import {
  STOP_REASON_ANNOTATION, appendPromptPatch, pendingPrompts, sessionCap,
  type Project, type PromptSource, type Session, type SessionStatusValue,
} from '../../resources/index.js';
import { admit, newSession } from '../../sessions/index.js';
import { ApiError } from '../errors.js';
import { serializeSession, sessionMessage, type SerializedSession } from './serialize.js';
import type { SessionStore } from './store.js';
import { chooseAgent, type StartRequest } from './validate.js';

export interface SessionServiceOptions {
  store: SessionStore;
  /** Bare mirrors for reading the default-branch manifest (shared with the CR service). */
  mirrorDir: string;
  /** The process-wide concurrent-session cap (SVC_MAX_CONCURRENT_SESSIONS). */
  defaultCap: number;
  now?: () => Date;
}

const PATCH_ATTEMPTS = 10;
/** How long a read of the default branch's manifest serves further starts (the mirror's fetch age). */
const MANIFEST_REUSE_MS = 2000;

/** The default branch as a start reads it: its tip and its manifest's document (null: none, unreadable, unreachable). */
interface DefaultBranchRead { sha: string | null; manifest: unknown }

/** A read of a project's default branch, shared by the starts that come while it is fresh. */
interface ManifestRead {
  startedAt: number;
  read: Promise<DefaultBranchRead>;
  /** Set once the read ended. */
  doneAt?: number;
  /** Its mirror, once opened: a fetch or an invalidation after the read ended makes it stale. */
  mirror?: Mirror;
}

export class SessionService {
  private readonly store: SessionStore;
  /**
   * Starts per namespace in batches, one batch at a time: the cap is counted and taken atomically
   * within this API, and read once for all the starts that came while the last batch ran.
   */
  private readonly starts = new KeyedBatcher<Session, Session>((namespace, sessions) => this.admitAndCreate(namespace, sessions));
  private readonly now: () => Date;
  /** Per project: the last read of its default branch's manifest (one per project; bounded). */
  private readonly manifestReads = new Lru<ManifestRead>(1024);

  constructor(private readonly options: SessionServiceOptions) {
    this.store = options.store;
    this.now = options.now ?? (() => new Date());
  }

  async project(namespace: string, projectId: string): Promise<Project> {
    const project = await this.store.findProject(namespace, projectId);
    if (!project) throw new ApiError(404, `project ${projectId} not found`);
    return project;
  }

  /**
   * The default branch's tip and manifest document. Starts within MANIFEST_REUSE_MS share one
   * read, as they share the mirror's fetch: thirty at once were thirty times git's reads (up to
   * 10 s each on two busy cores). Not past a newer fetch or an invalidation (a merge, a push
   * through the git gateway): that start reads again.
   */
  private defaultBranch(project: Project): Promise<DefaultBranchRead> {
    const key = `${project.metadata.uid}\0${project.spec.repoUrl}\0${project.spec.defaultBranch}`;
    const last = this.manifestReads.get(key);
    if (last && Date.now() - last.startedAt < MANIFEST_REUSE_MS) {
      const fetchedAt = last.mirror?.fetchedAt ?? 0;
      if (last.doneAt === undefined || (fetchedAt !== 0 && fetchedAt <= last.doneAt)) return last.read;
    }
    const entry: ManifestRead = { startedAt: Date.now(), read: Promise.resolve({ sha: null, manifest: null }) };
    entry.read = this.readDefaultBranch(project, entry).finally(() => { entry.doneAt = Date.now(); });
    this.manifestReads.set(key, entry);
    return entry.read;
  }

  private async readDefaultBranch(project: Project, entry: ManifestRead): Promise<DefaultBranchRead> {
    try {
      const mirror = openMirror({
        cacheDir: this.options.mirrorDir, projectId: project.metadata.uid!, url: project.spec.repoUrl,
        credentials: await this.store.gitCredentials(project), maxAgeMs: MANIFEST_REUSE_MS,
      });
      entry.mirror = mirror;
      await mirror.fetch();
      // the tip and both manifest candidates' sizes in one git process, the manifest in another
      const read = await mirror.readBranchFiles(project.spec.defaultBranch || 'main', MANIFEST_FILES, MANIFEST_MAX_BYTES);
      if (!read.sha) return { sha: null, manifest: null };
      // parsed, not checked (only its agents are read); a larger file is left unread (it would be refused as a manifest all the same)
      const manifest = await readManifestDocumentAt(async (_at, file) => read.files[(MANIFEST_FILES as readonly string[]).indexOf(file)] ?? null, read.sha);
      return { sha: read.sha, manifest: manifest ?? null };
    } catch {
      // unreachable: the Session controller reports it when it pushes the branch
    }
    return { sha: null, manifest: null };
  }

  async start(project: Project, request: StartRequest, userId: string): Promise<Session> {
    const namespace = project.metadata.namespace!;
    const branch = project.spec.defaultBranch || 'main';
    const tip = await this.defaultBranch(project);
    const agent = chooseAgent(request.agent, tip.manifest, branch);
    const baseRef = request.baseRef ?? branch;
    const session = newSession(project, {
      id: randomUUID(), agent, baseRef, baseSha: baseRef === branch ? tip.sha ?? undefined : undefined,
      model: request.model || undefined, initialPrompt: request.prompt || undefined, createdBy: userId,
    });
    return this.starts.run(namespace, session);
  }

  /**
   * A batch of starts of one namespace: admitted in the order they came against one read of the
   * cap (each admitted one takes its slot for those after it), the admitted created together.
   * A session request is never queued: one past the cap is a 429.
   */
  private async admitAndCreate(namespace: string, sessions: Session[]): Promise<PromiseSettledResult<Session>[]> {
    const [annotations, holders] = await Promise.all([this.store.namespaceAnnotations(namespace), this.store.slotHolders(namespace)]);
    const cap = sessionCap(annotations, this.options.defaultCap);
    const taken = [...holders];
    return Promise.allSettled(sessions.map(async (session) => {
      const admission = admit({ cap, queueDepth: 0, sessions: taken, fires: [], request: { kind: 'session' } });
      if (admission.kind === 'full') throw new ApiError(429, admission.reason);
      taken.push(session);
      return this.store.createSession(session);
    }));
  }

  async list(project: Project, status?: SessionStatusValue): Promise<Session[]> {
    return (await this.store.projectSessions(project, status))
      .filter((s) => !s.metadata.deletionTimestamp)
      // creation times have whole seconds: sessions of one second (a burst of fires) keep one order, by name
      .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || a.metadata.name!.localeCompare(b.metadata.name!));
  }

  /** `cached`: from the API's cache with this process's writes over it (a read); `live`: from the API server (before a write). */
  async get(project: Project, id: string, read: 'live' | 'cached' = 'live'): Promise<Session> {
    const namespace = project.metadata.namespace!;
    const session = read === 'cached' ? await this.store.cachedSession(namespace, id) : await this.store.getSession(namespace, id);
    if (!session || session.spec.projectRef.name !== project.metadata.name || session.metadata.deletionTimestamp) {
      throw new ApiError(404, `session ${id} not found in project ${project.metadata.name}`);
    }
    return session;
  }

  /** Merge-patches the session with a patch computed from a fresh read; retried on a lost race. */
  private patch(project: Project, id: string, change: (session: Session) => object | null): Promise<Session> {
    return retryOnConflict(async () => {
      const session = await this.get(project, id);
      const patch = change(session);
      return patch ? this.store.patchSession(project.metadata.namespace!, id, patch) : session;
    }, { attempts: PATCH_ATTEMPTS });
  }

  /** Stops the session: its sandbox goes, its branch stays. Idempotent. */
  stop(project: Project, id: string): Promise<Session> {
    return this.patch(project, id, (session) => (session.spec.desiredState === 'stopped' ? null : {
      metadata: { resourceVersion: session.metadata.resourceVersion, annotations: { [STOP_REASON_ANNOTATION]: 'Stopped' } },
      spec: { desiredState: 'stopped' },
    }));
  }

  /** Queues a follow-up prompt for the root engine session, waking a stopped session (409 for a failed one). */
  prompt(project: Project, id: string, text: string, source: PromptSource = 'api'): Promise<Session> {
    const prompt = { id: randomUUID(), text, source, at: this.now().toISOString() };
    return this.patch(project, id, (session) => {
      if (session.status?.status === 'failed') {
        throw new ApiError(409, `session ${id} failed (${failureOf(session)}); start a new session`);
      }
      const append = appendPromptPatch(session, prompt);
      if ('refused' in append) throw new ApiError(429, `${append.refused}: it takes them once it runs; send this one after`);
      return {
        metadata: { ...append.metadata, annotations: { ...append.metadata.annotations, [STOP_REASON_ANNOTATION]: null } },
        spec: { desiredState: 'running' },
      };
    });
  }

  /** The REST shape; `cached`: its Sandbox from the API's cache (a listing), else read now. */
  async serialize(project: Project, session: Session, read: 'live' | 'cached' = 'live'): Promise<SerializedSession> {
    const namespace = project.metadata.namespace!;
    const triggerName = session.spec.triggerRef?.name;
    const [sandbox, triggerSlug] = await Promise.all([
      read === 'cached' ? this.store.cachedSandbox(namespace, session.metadata.name!) : this.store.getSandbox(namespace, session.metadata.name!),
      triggerName ? this.store.triggerSlug(namespace, triggerName) : Promise.resolve(null),
    ]);
    return serializeSession(session, project.metadata.uid!, { sandbox, triggerSlug, pendingPrompts: pendingPrompts(session).length });
  }

  /** The kept log of a failed session's sandbox (bounded, redacted); 404 when none is kept, saying why. */
  async daemonLog(project: Project, id: string): Promise<string> {
    const session = await this.get(project, id);
    const log = await this.store.daemonLog(project.metadata.namespace!, id);
    if (log !== null) return log;
    // a session that failed before its sandbox said anything (a base ref not found): its cause is all there is
    if (session.status?.status === 'failed') throw new ApiError(404, `no sandbox log is kept for session ${id}: it failed (${failureOf(session)}) with no sandbox output to keep`);
    throw new ApiError(404, `no sandbox log is kept for session ${id}: svc keeps the log of a failed session's sandbox (svc sessions logs ${id} follows the engine of a live one)`);
  }

  /** Where the session's daemon answers and the key to sign for it; 409/503 when it is not running. */
  async proxyTarget(project: Project, id: string): Promise<{ session: Session; address: string; sandboxToken: string }> {
    const session = await this.get(project, id);
    const status = session.status?.status ?? 'provisioning';
    // stopped and wanted running: a prompt is waking it, and its sandbox comes (the 503 below)
    if (status === 'stopped' && session.spec.desiredState === 'stopped') throw new ApiError(409, `session ${id} is stopped; send it a prompt (svc sessions prompt) to wake it`);
    if (status === 'failed') throw new ApiError(409, `session ${id} failed (${failureOf(session)}); its sandbox's log, when one is kept: svc sessions logs ${id} --daemon; start a new session`);
    const sandbox = await this.store.getSandbox(project.metadata.namespace!, id);
    const address = sandbox?.status?.state === 'active' ? sandbox.status.address : undefined;
    const sandboxToken = await this.store.sandboxToken(project.metadata.namespace!, id);
    if (!address || !sandboxToken) {
      // its sandbox going away is no wait that ends with an answer: say that it is being stopped
      if (session.spec.desiredState === 'stopped') throw new ApiError(409, `session ${id} is being stopped; send it a prompt (svc sessions prompt) to wake it`);
      throw new ApiError(503, `session ${id} is ${status === 'stopped' ? 'waking' : status}: its sandbox is not ready yet; try again shortly`);
    }
    return { session, address, sandboxToken };
  }
}

/** A failed session's reason and message, as `svc sessions show` has them: "BaseRefNotFound: the base ref ...". */
function failureOf(session: Session): string {
  return [session.status?.reason ?? 'see its conditions', sessionMessage(session)].filter(Boolean).join(': ');
}
