// The change-request domain (SPEC §3.1, §4.1; DESIGN §4): create with the seven rules, numbers,
// SHA refresh on read, diff, preview, the merge procedure and the state machine's transitions.
// Routes (routes.ts) only parse, authorize and serialize. What the API does not do (the
// ChangeRequest controller in the operator does, controllers/changerequest): settle merge
// claims left by a merger that died, write a deleted originating session as null, deliver
// request-changes notes. Reads show the same answers meanwhile (views, never writes).
import {
  openMirror, RefNotFoundError, type DiffOptions, type GitIdentity, type Mirror, type DiffResult, type MergeResult,
  type PatchLimits,
} from '../../git/index.js';
import type { ChangeRequestPreview } from '../../lib/rest-shapes.js';
import {
  listedIssues, ManifestCheckThread, ManifestCheckUnavailable, manifestTooLarge, MANIFEST_MAX_BYTES, readManifestFileAt, type ManifestIssue,
} from '../../manifest/index.js';
import {
  API_VERSION, CHANGE_REQUEST, LABEL_PROJECT, changeRequestName, controllerReference,
  type ChangeRequest, type ChangeRequestStatus, type Project,
} from '../../resources/index.js';
import { ApiError } from '../errors.js';
import { apiErrorFromGit } from './git-errors.js';
import { KeyedMutex } from '../../lib/keyed-mutex.js';
import { isOwnClaim, newClaim, settle, type ClaimHolder } from '../../changerequests/merge-claim.js';
import { ConflictError, retryOnConflict } from '../../kube/index.js';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { requestedChangesFull, transition, type ChangeRequestAction } from './state.js';
import { NumberTakenError, type ChangeRequestStore } from './store.js';
import type { CreateRequest, EditRequest, MergeBody, StatusFilter } from './validate.js';
import { newestFirst } from './serialize.js';
import { clipText } from '../../lib/clip.js';

export interface ChangeRequestServiceOptions {
  store: ChangeRequestStore;
  /** Where the bare mirrors live (`<dir>/<project uid>.git`), shared with nothing that writes. */
  mirrorDir: string;
  /** Author and committer of merge commits: service configuration, never the caller's. */
  mergeIdentity?: GitIdentity;
  /** How long a fetch is reused by reads (default 0: every read of an open CR sees the live branches, SPEC §3.1; concurrent reads share one fetch). */
  fetchMaxAgeMs?: number;
  /** This replica in merge claims (default: the host name and a new instance id); its heartbeat Lease says it lives. */
  claimHolder?: ClaimHolder;
  /** Caps of a diff's patch (default DEFAULT_PATCH_LIMITS: 512 KiB per file, 4 MiB in total). */
  diffLimits?: Partial<PatchLimits>;
  now?: () => Date;
}

const STATUS_WRITE_ATTEMPTS = 10;

type GitContext = { base: string; head: string };
type FetchMode = 'none' | 'reuse' | 'force';
/** For failures that are not about one CR's branches (they are only logged or skipped). */
const ANY_BRANCH: GitContext = { base: 'the base branch', head: 'the head branch' };

export class ChangeRequestService {
  private readonly store: ChangeRequestStore;
  private readonly locks = new KeyedMutex();
  private readonly now: () => Date;
  private readonly holder: ClaimHolder;
  /** Ids of the CRs this process is pushing a merge of right now. */
  private readonly merging = new Set<string>();

  constructor(private readonly options: ChangeRequestServiceOptions) {
    this.store = options.store;
    this.now = options.now ?? (() => new Date());
    this.holder = options.claimHolder ?? { holder: os.hostname(), instance: randomUUID() };
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

  /**
   * Runs `work` on the project's mirror, fetched as asked: the one place where git failures
   * become API errors (git-errors.ts).
   */
  private async withMirror<T>(project: Project, context: GitContext, fetch: FetchMode, work: (mirror: Mirror) => Promise<T>): Promise<T> {
    try {
      const mirror = await this.mirror(project);
      if (fetch !== 'none') await mirror.fetch({ force: fetch === 'force' });
      return await work(mirror);
    } catch (error) {
      throw apiErrorFromGit(error, context);
    }
  }

  /** The session that opened a change request (null: none, or deleted), as stored: no fetch. */
  async originOf(project: Project, crId: string): Promise<string | null> {
    return (await this.load(project, crId)).spec.originSessionId ?? null;
  }

  private async load(project: Project, crId: string): Promise<ChangeRequest> {
    const cr = await this.store.get(project, crId);
    if (!cr) throw new ApiError(404, `change request ${crId} not found in project ${project.metadata.name}`);
    const [current] = await this.withoutDeletedOrigins(project, [cr]);
    return current!;
  }

  /**
   * SPEC §2.2: origin_session_id reads null once that Session is deleted (the CR stays). A view:
   * the ChangeRequest controller writes it on the resource.
   */
  private async withoutDeletedOrigins(project: Project, crs: ChangeRequest[]): Promise<ChangeRequest[]> {
    const namespace = project.metadata.namespace!;
    const exists = new Map<string, Promise<boolean>>();
    const sessionExists = (id: string) => {
      if (!exists.has(id)) exists.set(id, this.store.sessionExists(namespace, id));
      return exists.get(id)!;
    };
    return Promise.all(crs.map(async (cr) => {
      const origin = cr.spec.originSessionId;
      if (!origin || await sessionExists(origin)) return cr;
      return { ...cr, spec: { ...cr.spec, originSessionId: null } };
    }));
  }

  /** SPEC §4.1 create: rules 3-7 (1 and 2 are in validate.ts), then a number and the resource. */
  async create(project: Project, request: CreateRequest, userId: string): Promise<ChangeRequest> {
    const namespace = project.metadata.namespace!;
    const baseRef = request.baseRef ?? project.spec.defaultBranch ?? 'main';
    if (baseRef === request.headRef) throw new ApiError(400, `head_ref and base_ref are both ${baseRef}: a change request merges one branch into another`);
    const originSessionId = request.sessionId && (await this.store.sessionExists(namespace, request.sessionId)) ? request.sessionId : null;
    const context = { base: baseRef, head: request.headRef };
    // Rule 7: a push that just landed must be seen before we say "not ahead" (forced fetch).
    const { head, base, ahead } = await this.withMirror(project, context, 'force', async (mirror) => {
      const [head, base] = await Promise.all([mirror.resolveBranch(request.headRef), mirror.resolveBranch(baseRef)]);
      return { head, base, ahead: head && base ? await mirror.countAhead(base, head) : 0 };
    });
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

  /**
   * Every read of an open CR refreshes its SHAs from the live branches (SPEC §3.1): written, so
   * kubectl shows what the reader saw, and merged when its head is already in the base (merged
   * outside svc). A CR with a merge claim is left as stored: its merger, or the ChangeRequest
   * controller when the merger died, settles it.
   */
  private async refresh(project: Project, crs: ChangeRequest[]): Promise<ChangeRequest[]> {
    if (!crs.some((cr) => (cr.status?.status ?? 'open') === 'open')) return crs;
    let mirror: Mirror;
    let branches: Record<string, string>;
    try {
      ({ mirror, branches } = await this.withMirror(project, ANY_BRANCH, 'reuse', async (m) => ({ mirror: m, branches: await m.branches() })));
    } catch {
      return crs; // unreachable: serve the stored metadata (SPEC §3.1, §7)
    }
    return Promise.all(crs.map(async (cr) => {
      const head = branches[cr.spec.headRef];
      const base = branches[cr.spec.baseRef];
      if (cr.status?.status !== 'open' || !head || !base) return cr;
      return this.settleOpen(project, mirror, cr, head, base).catch(() => cr);
    }));
  }

  /** Writes the SHA refresh of an open CR without a claim at the observed tips (merged when its head is in the base); returns the current resource. */
  private async settleOpen(project: Project, mirror: Mirror, cr: ChangeRequest, head: string, base: string): Promise<ChangeRequest> {
    const status = cr.status!;
    if (status.mergeClaim) return cr;
    if (head === status.headCommitSha && base === status.baseCommitSha) return cr;
    const merged = await mirror.mergeOf(base, head);
    const next = settle(status, { head, base, merged }, false, this.now());
    if (!next) return cr;
    try {
      const written = await this.store.writeStatus(cr, next);
      if (next.status === 'merged') await this.recordMerged(project, written, merged!.mergeCommitSha === head);
      return written;
    } catch (error) {
      if (error instanceof ConflictError) return (await this.store.get(project, cr.metadata.uid!)) ?? cr;
      throw error;
    }
  }

  /** `originSessionId`: only the CRs that session opened, chosen before any refresh reads git. */
  async list(project: Project, filter: StatusFilter, originSessionId?: string): Promise<ChangeRequest[]> {
    const wanted = (cr: ChangeRequest) => (filter === 'all' || (cr.status?.status ?? 'open') === filter)
      && (originSessionId === undefined || cr.spec.originSessionId === originSessionId);
    const all = (await this.store.list(project)).filter(wanted);
    // filtered again: reading may have found an open CR merged
    return (await this.refresh(project, await this.withoutDeletedOrigins(project, all))).filter(wanted).sort(newestFirst);
  }

  async get(project: Project, crId: string): Promise<ChangeRequest> {
    const [cr] = await this.refresh(project, [await this.load(project, crId)]);
    return cr!;
  }

  /** The CR's diff; with `onPatch` the patch is streamed there as git produces it (and `patch` is ''). */
  async diff(project: Project, crId: string, onPatch?: DiffOptions['onPatch']): Promise<DiffResult> {
    const cr = await this.load(project, crId);
    const s = cr.status;
    const anchors = s?.baseCommitSha && s.headCommitSha ? { base: s.baseCommitSha, head: s.headCommitSha } : null;
    // What a merged CR brought: three-dot on the stored SHAs (docs/change-requests.md); no fetch needed.
    const merged = s?.status === 'merged' && anchors !== null;
    const options: DiffOptions = { limits: this.options.diffLimits, onPatch };
    return this.withMirror(project, branchesOf(cr), merged ? 'none' : 'reuse', async (mirror) => {
      if (merged) return mirror.diff(anchors.base, anchors.head, options);
      try {
        return await mirror.diff(cr.spec.baseRef, cr.spec.headRef, options);
      } catch (error) {
        // A branch is gone (refs are resolved before any patch is streamed): the anchor SHAs still tell what the CR was about.
        if (error instanceof RefNotFoundError && anchors) return mirror.diff(anchors.base, anchors.head, options);
        throw error;
      }
    });
  }

  async preview(project: Project, crId: string): Promise<ChangeRequestPreview> {
    const cr = await this.load(project, crId);
    return this.withMirror(project, branchesOf(cr), 'reuse', async (mirror) => {
      const preview = await mirror.preview(cr.spec.baseRef, cr.spec.headRef);
      // the merge gate's verdict on the same head commit, so the preview never promises a refused merge
      const issues = await manifestIssues(mirror, preview.head_sha);
      return issues ? { ...preview, manifest_issues: issues } : preview;
    });
  }

  /**
   * Applies `change` to the freshest copy of the CR until the write lands (resourceVersion
   * preconditions); `change` decides again on every attempt.
   */
  private update(project: Project, crId: string, change: (cr: ChangeRequest) => ChangeRequestStatus | null): Promise<ChangeRequest> {
    return retryOnConflict(async () => {
      const cr = await this.load(project, crId);
      const status = change(cr);
      return status === null ? cr : this.store.writeStatus(cr, status);
    }, { attempts: STATUS_WRITE_ATTEMPTS });
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
      if (cr.status?.mergeClaim) throw mergeInProgress(cr);
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
      const full = requestedChangesFull(cr.status?.requestedChanges ?? [], feedback, cr.spec.number);
      if (full) throw new ApiError(409, full);
      const at = this.timestamp();
      return { ...cr.status!, requestedChanges: [...(cr.status?.requestedChanges ?? []), { text: feedback, by: userId, at }], updatedAt: at };
    }));
    // The ChangeRequest controller delivers the note to the originating session (FeedbackDelivered / FeedbackNotDelivered).
    await this.store.recordEvent(updated, { type: 'Normal', reason: 'ChangesRequested', message: `changes requested by ${userId}: ${oneLine(feedback)}` });
    return updated;
  }

  async edit(project: Project, crId: string, edit: EditRequest): Promise<ChangeRequest> {
    return this.mutate(crId, () => retryOnConflict(async () => {
      const cr = await this.store.get(project, crId);
      if (!cr) throw new ApiError(404, `change request ${crId} not found in project ${project.metadata.name}`);
      this.check(cr, 'edit');
      // the stored spec (not the read view): the ChangeRequest controller writes a deleted origin
      const written = await this.store.writeSpec(cr, { ...cr.spec, ...edit });
      return this.store.writeStatus(written, { ...written.status!, updatedAt: this.timestamp() });
    }, { attempts: STATUS_WRITE_ATTEMPTS }).then((cr) => this.withoutDeletedOrigins(project, [cr]).then(([view]) => view!)));
  }

  /**
   * SPEC §4.1 merge procedure, in order, exactly once across replicas and crashes: the CR is
   * claimed in the cluster (a status write at the read resourceVersion) before anything is
   * pushed, and only the claimer pushes (docs/change-requests.md).
   */
  async merge(project: Project, crId: string, body: MergeBody, userId: string): Promise<ChangeRequest> {
    return this.mutate(crId, async () => {
      const loaded = await this.load(project, crId);
      this.check(loaded, 'merge');
      return this.withMirror(project, branchesOf(loaded), 'force', async (mirror) => {
        const [head, base] = await Promise.all([mirror.resolveCommit(loaded.spec.headRef), mirror.resolveCommit(loaded.spec.baseRef)]);
        // A head already in the base is recorded first (it may now be merged).
        const cr = await this.settleOpen(project, mirror, loaded, head, base);
        this.check(cr, 'merge');
        if (this.claimedElsewhere(cr)) throw mergeInProgress(cr);
        if (body.expectedHeadSha && body.expectedHeadSha !== head) {
          throw new ApiError(409, `the head branch ${cr.spec.headRef} moved: expected ${body.expectedHeadSha}, it is now at ${head}; review the new commits and merge again`);
        }
        // 1. Manifest gate on exactly the commit that will be merged.
        const issues = await manifestIssues(mirror, head);
        if (issues) throw new ApiError(422, `the manifest on ${cr.spec.headRef} is invalid: ${issues.map((i) => `${i.path || '(top level)'}: ${i.message}`).join('; ')}`, 'MANIFEST_INVALID', { issues });
        await this.claim(project, cr, head, base, userId);
        this.merging.add(crId);
        let result;
        try {
          // 2.-3. Fast-forward or three-way merge, pushed with a lease; the engine invalidates the mirror.
          result = await mirror.merge({ base: cr.spec.baseRef, head: cr.spec.headRef, message: body.message ?? `Merge CR #${cr.spec.number}: ${cr.spec.title}`, expectedHeadSha: head });
        } catch (error) {
          await this.releaseClaim(project, crId).catch(() => undefined); // else a reader releases it (own claim, not running)
          throw error;
        } finally {
          this.merging.delete(crId);
        }
        return this.recordMerge(project, crId, result, userId);
      });
    });
  }

  /**
   * A claim stands that is not this process's own left-over (its own claim with no merge of it
   * running here, after a failed release, is free to take again).
   */
  private claimedElsewhere(cr: ChangeRequest): boolean {
    const claim = cr.status?.mergeClaim;
    return !!claim && !(isOwnClaim(claim, this.holder) && !this.merging.has(cr.metadata.uid!));
  }

  /** Takes the merge claim at the read resourceVersion: exactly one of concurrent mergers wins, the others get 409. */
  private claim(project: Project, first: ChangeRequest, head: string, base: string, userId: string): Promise<ChangeRequest> {
    return retryOnConflict(async (attempt) => {
      // After a lost race (a merge, or only a SHA refresh landed first): decide again on a fresh read.
      const cr = attempt === 1 ? first : await this.load(project, first.metadata.uid!);
      if (attempt > 1) {
        this.check(cr, 'merge');
        if (this.claimedElsewhere(cr)) throw mergeInProgress(cr);
      }
      return this.store.writeStatus(cr, { ...cr.status!, mergeClaim: newClaim(this.holder, userId, head, base, this.now()) });
    }, { attempts: STATUS_WRITE_ATTEMPTS });
  }

  private releaseClaim(project: Project, crId: string): Promise<ChangeRequest> {
    return this.update(project, crId, (current) =>
      isOwnClaim(current.status?.mergeClaim, this.holder) ? { ...current.status!, mergeClaim: null, updatedAt: this.timestamp() } : null);
  }

  /** 4. The merge is on the host: record it whatever else changed on the resource meanwhile. */
  private async recordMerge(project: Project, crId: string, result: MergeResult, userId: string): Promise<ChangeRequest> {
    const at = this.timestamp();
    const merged = await this.update(project, crId, (current) => {
      // A reader found our merge on the base first (same commit): already recorded.
      if (current.status?.status === 'merged' && current.status.mergeCommitSha === result.merge_commit_sha) return null;
      return {
        ...current.status!,
        status: 'merged',
        mergedAt: at,
        mergedBy: userId,
        mergeCommitSha: result.merge_commit_sha,
        baseCommitSha: result.base_commit_sha,
        headCommitSha: result.head_commit_sha,
        mergeClaim: null,
        updatedAt: at,
      };
    });
    await this.recordMerged(project, merged, result.fast_forward);
    return merged;
  }

  /** After a merge is recorded: the Project re-reads its default branch; an Event says who merged what (controllers/changerequest does the same for merges it records). */
  private async recordMerged(project: Project, cr: ChangeRequest, fastForward: boolean): Promise<void> {
    const s = cr.status!;
    const how = s.mergedBy ? `by ${s.mergedBy}` : 'outside svc (its head is in the base)';
    await Promise.allSettled([
      this.store.requestProjectRefresh(project),
      this.store.recordEvent(cr, {
        type: 'Normal',
        reason: 'Merged',
        message: `${fastForward ? 'fast-forwarded' : 'merged'} ${cr.spec.headRef} into ${cr.spec.baseRef} at ${(s.mergeCommitSha ?? '').slice(0, 12)} ${how}`,
      }),
    ]);
  }
}

function branchesOf(cr: ChangeRequest): GitContext {
  return { base: cr.spec.baseRef, head: cr.spec.headRef };
}

function mergeInProgress(cr: ChangeRequest): ApiError {
  const claim = cr.status!.mergeClaim!;
  return new ApiError(409, `change request #${cr.spec.number} is being merged (started ${claim.claimedAt} by ${claim.by}); try again in a moment`);
}

/** The API's manifest checks, off its event loop (an agent's branch may hold a manifest that takes seconds to check). */
const manifestChecks = new ManifestCheckThread();

/** Issues of the manifest at `sha` (svc.yaml, else svc.toml), as shown (listedIssues); null when valid or absent. */
async function manifestIssues(mirror: Mirror, sha: string): Promise<ManifestIssue[] | null> {
  const found = await readManifestFileAt((at, file) => mirror.readFile(at, file, MANIFEST_MAX_BYTES), sha);
  if (!found) return null;
  if (typeof found.read !== 'string') return listedIssues(manifestTooLarge(found.file, found.read.bytes).issues);
  try {
    return await manifestChecks.issues(found.file, found.read);
  } catch (error) {
    if (error instanceof ManifestCheckUnavailable) throw new ApiError(503, `the manifest at ${sha.slice(0, 12)} could not be checked: ${error.message}`);
    throw error;
  }
}

function oneLine(text: string, max = 200): string {
  return clipText(text.replace(/\s+/g, ' ').trim(), max);
}

