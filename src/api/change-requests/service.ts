// The change-request domain (SPEC §3.1, §4.1; DESIGN §4): create with the seven rules, numbers,
// SHA refresh on read, diff, preview, the merge procedure and the state machine's side effects.
// Routes (routes.ts) only parse, authorize and serialize.
import {
  openMirror, RefNotFoundError, type GitIdentity, type Mirror, type DiffResult, type MergePreview,
} from '../../git/index.js';
import { checkManifest, MANIFEST_FILES, type ManifestIssue } from '../../manifest/index.js';
import {
  API_VERSION, CHANGE_REQUEST, LABEL_PROJECT, changeRequestName, controllerReference,
  type ChangeRequest, type ChangeRequestStatus, type Project,
} from '../../resources/index.js';
import { ApiError } from '../errors.js';
import { apiErrorFromGit } from './git-errors.js';
import { KeyedMutex } from '../../lib/keyed-mutex.js';
import { transition, type ChangeRequestAction } from './state.js';
import { NumberTakenError, StaleWriteError, type ChangeRequestStore } from './store.js';
import type { CreateRequest, EditRequest, MergeBody, StatusFilter } from './validate.js';
import { newestFirst } from './serialize.js';

export interface ChangeRequestServiceOptions {
  store: ChangeRequestStore;
  /** Where the bare mirrors live (`<dir>/<project uid>.git`), shared with nothing that writes. */
  mirrorDir: string;
  /** Author and committer of merge commits: service configuration, never the caller's. */
  mergeIdentity?: GitIdentity;
  /** How long a fetch is reused by reads (default 0: every read of an open CR sees the live branches, SPEC §3.1; concurrent reads share one fetch). */
  fetchMaxAgeMs?: number;
  now?: () => Date;
}

const STATUS_WRITE_ATTEMPTS = 10;

export class ChangeRequestService {
  private readonly store: ChangeRequestStore;
  private readonly locks = new KeyedMutex();
  private readonly now: () => Date;

  constructor(private readonly options: ChangeRequestServiceOptions) {
    this.store = options.store;
    this.now = options.now ?? (() => new Date());
  }

  private timestamp(): string {
    return this.now().toISOString();
  }

  async project(namespace: string, projectId: string): Promise<Project> {
    const project = await this.store.findProject(namespace, projectId);
    if (!project) throw new ApiError(404, `project ${projectId} not found`);
    return project;
  }

  accountId(namespace: string): Promise<string | null> {
    return this.store.accountId(namespace);
  }

  private async mirror(project: Project): Promise<Mirror> {
    const credentials = await this.store.gitCredentials(project);
    return openMirror({
      cacheDir: this.options.mirrorDir,
      projectId: project.metadata.uid!,
      url: project.spec.repoUrl,
      credentials,
      mergeIdentity: this.options.mergeIdentity,
      maxAgeMs: this.options.fetchMaxAgeMs ?? 0,
    });
  }

  private async load(project: Project, crId: string): Promise<ChangeRequest> {
    const cr = await this.store.get(project, crId);
    if (!cr) throw new ApiError(404, `change request ${crId} not found in project ${project.metadata.name}`);
    const [current] = await this.forgetDeletedOrigins(project, [cr]);
    return current!;
  }

  /**
   * SPEC §2.2: origin_session_id becomes null once that Session is deleted (the CR stays).
   * Checked whenever CRs are read, and written back so kubectl shows the same.
   */
  private async forgetDeletedOrigins(project: Project, crs: ChangeRequest[]): Promise<ChangeRequest[]> {
    const namespace = project.metadata.namespace!;
    const exists = new Map<string, Promise<boolean>>();
    const sessionExists = (id: string) => {
      if (!exists.has(id)) exists.set(id, this.store.sessionExists(namespace, id));
      return exists.get(id)!;
    };
    return Promise.all(crs.map(async (cr) => {
      const origin = cr.spec.originSessionId;
      if (!origin || await sessionExists(origin)) return cr;
      try {
        return await this.store.writeSpec(cr, { ...cr.spec, originSessionId: null });
      } catch (error) {
        if (error instanceof StaleWriteError) return { ...cr, spec: { ...cr.spec, originSessionId: null } };
        throw error;
      }
    }));
  }

  /** SPEC §4.1 create: rules 3-7 (1 and 2 are in validate.ts), then a number and the resource. */
  async create(project: Project, request: CreateRequest, userId: string): Promise<ChangeRequest> {
    const namespace = project.metadata.namespace!;
    const baseRef = request.baseRef ?? project.spec.defaultBranch ?? 'main';
    if (baseRef === request.headRef) throw new ApiError(400, `head_ref and base_ref are both ${baseRef}: a change request merges one branch into another`);
    const originSessionId = request.sessionId && (await this.store.sessionExists(namespace, request.sessionId)) ? request.sessionId : null;
    const context = { base: baseRef, head: request.headRef };
    let head: string | null;
    let base: string | null;
    let ahead = 0;
    try {
      const mirror = await this.mirror(project);
      // Rule 7: a push that just landed must be seen before we say "not ahead".
      await mirror.fetch({ force: true });
      [head, base] = await Promise.all([mirror.resolveBranch(request.headRef), mirror.resolveBranch(baseRef)]);
      if (head && base) ahead = await mirror.countAhead(base, head);
    } catch (error) {
      throw apiErrorFromGit(error, context);
    }
    if (!base) throw new ApiError(422, `base branch ${baseRef} does not exist in the repository`, 'CR_BASE_NOT_FOUND');
    if (!head) throw new ApiError(422, `head branch ${request.headRef} does not exist in the repository: push it first (git push origin HEAD)`, 'CR_HEAD_NOT_AHEAD');
    if (ahead === 0) {
      throw new ApiError(422, `head branch ${request.headRef} has no commit that ${baseRef} does not have: commit and push your work first`, 'CR_HEAD_NOT_AHEAD');
    }
    const now = this.timestamp();
    const status: ChangeRequestStatus = {
      status: 'open', headCommitSha: head, baseCommitSha: base, mergedAt: null, mergedBy: null, mergeCommitSha: null,
      closedAt: null, closedBy: null, requestedChanges: [], updatedAt: now,
    };
    for (;;) {
      const number = await this.locks.run(`number/${project.metadata.uid}`, () => this.store.reserveNumber(project));
      const cr: ChangeRequest = {
        apiVersion: API_VERSION,
        kind: CHANGE_REQUEST.kind,
        metadata: {
          name: changeRequestName(project.metadata.name!, number),
          namespace,
          labels: { [LABEL_PROJECT]: project.metadata.name! },
          ownerReferences: [controllerReference(project)],
        },
        spec: {
          projectRef: { name: project.metadata.name! },
          number,
          title: request.title,
          description: request.description,
          baseRef,
          headRef: request.headRef,
          originSessionId,
          createdBy: userId,
        },
      };
      try {
        return await this.store.create(project, cr, status);
      } catch (error) {
        // The counter was behind an existing resource (restored from a backup, say): take the next one.
        if (error instanceof NumberTakenError) continue;
        throw error;
      }
    }
  }

  /** Every read of an open CR refreshes its SHAs from the live branches (SPEC §3.1). */
  private async refresh(project: Project, crs: ChangeRequest[]): Promise<ChangeRequest[]> {
    if (!crs.some((cr) => (cr.status?.status ?? 'open') === 'open')) return crs;
    let branches: Record<string, string>;
    try {
      const mirror = await this.mirror(project);
      await mirror.fetch();
      branches = await mirror.branches();
    } catch {
      return crs; // unreachable: serve the stored metadata (SPEC §3.1, §7)
    }
    return Promise.all(crs.map(async (cr) => {
      const status = cr.status;
      if (!status || status.status !== 'open') return cr;
      const head = branches[cr.spec.headRef];
      const base = branches[cr.spec.baseRef];
      if (!head || !base) return cr;
      if (head === status.headCommitSha && base === status.baseCommitSha) return cr;
      try {
        return await this.store.writeStatus(cr, { ...status, headCommitSha: head, baseCommitSha: base, updatedAt: this.timestamp() });
      } catch (error) {
        if (error instanceof StaleWriteError) return (await this.store.get(project, cr.metadata.uid!)) ?? cr;
        throw error;
      }
    }));
  }

  async list(project: Project, filter: StatusFilter): Promise<ChangeRequest[]> {
    const all = (await this.store.list(project)).filter((cr) => filter === 'all' || (cr.status?.status ?? 'open') === filter);
    return (await this.refresh(project, await this.forgetDeletedOrigins(project, all))).sort(newestFirst);
  }

  async get(project: Project, crId: string): Promise<ChangeRequest> {
    const [cr] = await this.refresh(project, [await this.load(project, crId)]);
    return cr!;
  }

  async diff(project: Project, crId: string): Promise<DiffResult> {
    const cr = await this.load(project, crId);
    const s = cr.status;
    const context = { base: cr.spec.baseRef, head: cr.spec.headRef };
    try {
      const mirror = await this.mirror(project);
      if (s?.status === 'merged' && s.baseCommitSha && s.headCommitSha) {
        // What the CR brought: three-dot on the stored SHAs (docs/change-requests.md).
        return await mirror.diff(s.baseCommitSha, s.headCommitSha);
      }
      await mirror.fetch();
      try {
        return await mirror.diff(cr.spec.baseRef, cr.spec.headRef);
      } catch (error) {
        // A branch is gone: the anchor SHAs still tell what the CR was about.
        if (error instanceof RefNotFoundError && s?.baseCommitSha && s.headCommitSha) return await mirror.diff(s.baseCommitSha, s.headCommitSha);
        throw error;
      }
    } catch (error) {
      throw apiErrorFromGit(error, context);
    }
  }

  async preview(project: Project, crId: string): Promise<MergePreview> {
    const cr = await this.load(project, crId);
    try {
      const mirror = await this.mirror(project);
      await mirror.fetch();
      return await mirror.preview(cr.spec.baseRef, cr.spec.headRef);
    } catch (error) {
      throw apiErrorFromGit(error, { base: cr.spec.baseRef, head: cr.spec.headRef });
    }
  }

  /**
   * Applies `change` to the freshest copy of the CR until the write lands (resourceVersion
   * preconditions); `change` decides again on every attempt.
   */
  private async update(project: Project, crId: string, change: (cr: ChangeRequest) => ChangeRequestStatus | null): Promise<ChangeRequest> {
    for (let attempt = 1; ; attempt++) {
      const cr = await this.load(project, crId);
      const status = change(cr);
      if (status === null) return cr;
      try {
        return await this.store.writeStatus(cr, status);
      } catch (error) {
        if (!(error instanceof StaleWriteError) || attempt >= STATUS_WRITE_ATTEMPTS) throw error;
      }
    }
  }

  private check(cr: ChangeRequest, action: ChangeRequestAction) {
    const result = transition(cr.status?.status ?? 'open', action, cr.spec.number);
    if (!result.allowed) throw new ApiError(409, result.message);
    return result;
  }

  private mutate<T>(crId: string, work: () => Promise<T>): Promise<T> {
    return this.locks.run(`cr/${crId}`, work);
  }

  async close(project: Project, crId: string, userId: string): Promise<ChangeRequest> {
    return this.mutate(crId, () => this.update(project, crId, (cr) => {
      const result = this.check(cr, 'close');
      if (!result.changed) return null;
      const at = this.timestamp();
      return { ...cr.status!, status: 'closed', closedAt: at, closedBy: userId, updatedAt: at };
    }));
  }

  async reopen(project: Project, crId: string): Promise<ChangeRequest> {
    const reopened = await this.mutate(crId, () => this.update(project, crId, (cr) => {
      this.check(cr, 'reopen');
      return { ...cr.status!, status: 'open', closedAt: null, closedBy: null, updatedAt: this.timestamp() };
    }));
    return this.get(project, reopened.metadata.uid!); // tips re-resolved (SPEC §3.1)
  }

  async requestChanges(project: Project, crId: string, feedback: string, userId: string): Promise<ChangeRequest> {
    const updated = await this.mutate(crId, () => this.update(project, crId, (cr) => {
      this.check(cr, 'request-changes');
      const at = this.timestamp();
      return { ...cr.status!, requestedChanges: [...(cr.status?.requestedChanges ?? []), { text: feedback, by: userId, at }], updatedAt: at };
    }));
    await this.store.recordEvent(updated, { type: 'Normal', reason: 'ChangesRequested', message: `changes requested by ${userId}: ${oneLine(feedback)}` });
    return updated;
  }

  async edit(project: Project, crId: string, edit: EditRequest): Promise<ChangeRequest> {
    return this.mutate(crId, async () => {
      for (let attempt = 1; ; attempt++) {
        const cr = await this.load(project, crId);
        this.check(cr, 'edit');
        try {
          const written = await this.store.writeSpec(cr, { ...cr.spec, ...edit });
          return await this.store.writeStatus(written, { ...written.status!, updatedAt: this.timestamp() });
        } catch (error) {
          if (!(error instanceof StaleWriteError) || attempt >= STATUS_WRITE_ATTEMPTS) throw error;
        }
      }
    });
  }

  /** SPEC §4.1 merge procedure, in order. */
  async merge(project: Project, crId: string, body: MergeBody, userId: string): Promise<ChangeRequest> {
    return this.mutate(crId, async () => {
      const cr = await this.load(project, crId);
      this.check(cr, 'merge');
      const context = { base: cr.spec.baseRef, head: cr.spec.headRef };
      let result;
      try {
        const mirror = await this.mirror(project);
        await mirror.fetch({ force: true });
        const head = await mirror.resolveCommit(cr.spec.headRef);
        if (body.expectedHeadSha && body.expectedHeadSha !== head) {
          throw new ApiError(409, `the head branch ${cr.spec.headRef} moved: expected ${body.expectedHeadSha}, it is now at ${head}; review the new commits and merge again`);
        }
        // 1. Manifest gate on exactly the commit that will be merged.
        const issues = await manifestIssues(mirror, head);
        if (issues) throw new ApiError(422, `the manifest on ${cr.spec.headRef} is invalid: ${issues.map((i) => `${i.path || '(top level)'}: ${i.message}`).join('; ')}`, 'MANIFEST_INVALID', { issues });
        // 2.-3. Fast-forward or three-way merge, pushed with a lease; the engine invalidates the mirror.
        result = await mirror.merge({ base: cr.spec.baseRef, head: cr.spec.headRef, message: body.message ?? `Merge CR #${cr.spec.number}: ${cr.spec.title}`, expectedHeadSha: head });
      } catch (error) {
        throw apiErrorFromGit(error, context);
      }
      // 4. The merge is on the host: record it whatever else changed on the resource meanwhile.
      const at = this.timestamp();
      const merged = await this.update(project, crId, (current) => ({
        ...current.status!,
        status: 'merged',
        mergedAt: at,
        mergedBy: userId,
        mergeCommitSha: result.merge_commit_sha,
        baseCommitSha: result.base_commit_sha,
        headCommitSha: result.head_commit_sha,
        updatedAt: at,
      }));
      await Promise.allSettled([
        this.store.requestProjectRefresh(project),
        this.store.recordEvent(merged, {
          type: 'Normal',
          reason: 'Merged',
          message: `${result.fast_forward ? 'fast-forwarded' : 'merged'} ${cr.spec.headRef} into ${cr.spec.baseRef} at ${result.merge_commit_sha.slice(0, 12)} by ${userId}`,
        }),
      ]);
      return merged;
    });
  }
}

/** Issues of the manifest at `sha` (svc.yaml, else svc.toml); null when valid or absent. */
async function manifestIssues(mirror: Mirror, sha: string): Promise<ManifestIssue[] | null> {
  for (const file of MANIFEST_FILES) {
    const text = await mirror.readFile(sha, file);
    if (text === null) continue;
    const check = checkManifest(file, text);
    return check.valid ? null : check.issues;
  }
  return null;
}

function oneLine(text: string, max = 200): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

