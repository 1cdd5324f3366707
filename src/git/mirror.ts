// One bare mirror per project: fetch with an explicit refspec, reads with plumbing,
// previews and merges without a working tree, pushes with a lease.
import { access, mkdir, mkdtemp, readdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  BaseMovedError, BranchExistsError, MergeConflictError, GitEngineError, GitError, HeadMovedError, InvalidInputError, InvalidRefError,
  NothingToMergeError, PushRejectedError, RefNotFoundError,
} from './errors.js';
import { runGit, streamGit, type RunOptions, type RunResult } from './exec.js';
import { DEFAULT_PATCH_LIMITS, PatchLimiter, type PatchLimits } from './patch-limit.js';
import { ConflictCollector, DiffFileCollector } from './diffparse.js';
import type { DiffResult, MergePreview, MergeResult } from '../lib/rest-shapes.js';
import { KeyedMutex } from '../lib/keyed-mutex.js';
import { parseRemote, unreachableFrom, withRemoteInvocation, type GitCredentials, type Remote, type RemoteInvocation } from './remote.js';
import { assertBranchName, isFullSha, revisionToRef, treePathProblem } from './refs.js';
import { checkpointRef } from '../lib/session-refs.js';
import { clipText } from '../lib/clip.js';

export interface GitIdentity {
  name: string;
  email: string;
}

/** The merge author and committer when the service configures none. */
export const DEFAULT_MERGE_IDENTITY: GitIdentity = { name: 'svc', email: 'noreply@svc.dev' };

export interface MirrorOptions {
  /** Directory holding every project's mirror (`<cacheDir>/<projectId>.git`). */
  cacheDir: string;
  projectId: string;
  /** Absolute path, file://, http(s):// (userinfo is moved into the credentials) or ssh. */
  url: string;
  /** Values, e.g. from the Project's Secret; passed to git through the environment only. */
  credentials?: GitCredentials | null;
  /** Accept local paths and file:// (default: SVC_ALLOW_LOCAL_REPOS=1 in the environment); else LocalRepoNotAllowedError. */
  allowLocalRepos?: boolean;
  /** Timeout of every local git call (default 30 s). */
  timeoutMs?: number;
  /** Timeout of fetch and push (default 120 s). */
  remoteTimeoutMs?: number;
  /** `fetch()` without `force` skips the network when the last fetch is younger (default 2 s). */
  maxAgeMs?: number;
  /** Author and committer of merge commits (default `svc <noreply@svc.dev>`). */
  mergeIdentity?: GitIdentity;
  /** Clock for merge commit dates. */
  clock?: () => Date;
}

export type DiffMode = 'three-dot' | 'two-dot';

/** A file left unread because it is larger than the reader's limit: its size only. */
export interface BlobTooLarge { bytes: number }

export type { DiffResult, MergePreview, MergeResult } from '../lib/rest-shapes.js';

export interface DiffOptions {
  mode?: DiffMode;
  /** Caps of the patch (default DEFAULT_PATCH_LIMITS). */
  limits?: Partial<PatchLimits>;
  /** Receives the patch as git produces it (git waits while a returned promise is pending); then `patch` is ''. */
  onPatch?: (text: string) => void | Promise<void>;
}

export interface MergeRequest {
  base: string;
  head: string;
  /** Commit message of a three-way merge (e.g. `Merge CR #3: Title`). */
  message: string;
  /** Refuse with HeadMovedError unless the head is at this sha. */
  expectedHeadSha?: string;
}

const writeLocks = new KeyedMutex();
/** Mirror dir -> time of the last successful fetch (0 = invalidated). Shared by every handle on a dir. */
const lastFetch = new Map<string, number>();
/** Mirror dir -> a forced fetch waiting for the lock (not started yet). */
const queuedForcedFetch = new Map<string, Promise<void>>();

/** A session branch waiting for the next grouped push of its mirror (pushBranch). */
interface BranchToPush { name: string; sha: string; resolve: (result: { created: boolean }) => void; reject: (error: unknown) => void }
/** Per mirror directory: the branches asked for since its last grouped push started. */
const queuedBranchPushes = new Map<string, BranchToPush[]>();

const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** What a mirror fetches from its host: branches, and the checkpoint refs of sessions (DESIGN §8.3). */
export const MIRROR_REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/svc/checkpoints/*:refs/svc/checkpoints/*'];
// Applied to every call: auto-gc runs inside the (locked, timed) fetch rather than detached.
const BASE_CONFIG = ['-c', 'gc.autoDetach=false', '-c', 'core.quotePath=false'];

export function openMirror(options: MirrorOptions): Mirror {
  return new Mirror(options);
}

/**
 * Removes the mirrors in `cacheDir` of projects that are gone. `liveIds` is asked once for the
 * candidates and again under each candidate's lock, so a project that appeared meanwhile keeps
 * its mirror. Returns the project ids whose mirrors were removed.
 */
export async function pruneMirrors(cacheDir: string, liveIds: () => ReadonlySet<string>): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(cacheDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const live = liveIds();
  const removed: string[] = [];
  for (const entry of entries) {
    const id = entry.endsWith('.git') ? entry.slice(0, -'.git'.length) : '';
    if (!PROJECT_ID.test(id) || live.has(id)) continue;
    const dir = path.join(cacheDir, entry);
    await writeLocks.run(dir, async () => {
      if (liveIds().has(id)) return;
      await rm(dir, { recursive: true, force: true });
      lastFetch.delete(dir);
      removed.push(id);
    });
  }
  return removed;
}

export class Mirror {
  /** The bare repository directory. */
  readonly dir: string;
  private readonly remote: Remote;
  private readonly timeoutMs: number;
  private readonly remoteTimeoutMs: number;
  private readonly maxAgeMs: number;
  private readonly identity: GitIdentity;
  private readonly clock: () => Date;
  private emptyTree: Promise<string> | null = null;

  constructor(options: MirrorOptions) {
    if (!PROJECT_ID.test(options.projectId)) throw new TypeError(`git mirror: project id '${options.projectId}' must be 1-128 of [A-Za-z0-9._-]`);
    if (!path.isAbsolute(options.cacheDir)) throw new TypeError(`git mirror: cacheDir '${options.cacheDir}' must be absolute`);
    this.dir = path.join(options.cacheDir, `${options.projectId}.git`);
    this.remote = parseRemote(options.url, options.credentials, options.allowLocalRepos);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.remoteTimeoutMs = options.remoteTimeoutMs ?? 120_000;
    this.maxAgeMs = options.maxAgeMs ?? 2_000;
    this.identity = options.mergeIdentity ?? DEFAULT_MERGE_IDENTITY;
    this.clock = options.clock ?? (() => new Date());
  }

  /** The remote URL as messages show it (userinfo redacted). */
  get displayUrl(): string {
    return this.remote.displayUrl;
  }

  // ---------------------------------------------------------------- fetch

  /**
   * Brings the mirror up to date with the host (creating it on first use). Without
   * `force` a fetch younger than `maxAgeMs` is reused; with `force` a new fetch always
   * starts after the call (SPEC §4.1 rule 7).
   */
  async fetch(options: { force?: boolean } = {}): Promise<void> {
    if (options.force) return this.forcedFetch();
    if (this.isFresh()) return;
    await this.locked(async () => {
      if (!options.force && this.isFresh()) return; // another caller fetched while we waited
      await this.fetchLocked();
    });
  }

  /**
   * Forced fetches asked for before one has started share it: it still begins after
   * every one of those calls (so each sees pushes that landed before it asked).
   */
  private forcedFetch(): Promise<void> {
    const queued = queuedForcedFetch.get(this.dir);
    if (queued) return queued;
    const fetching = this.locked(async () => {
      queuedForcedFetch.delete(this.dir); // started: later callers need a fetch of their own
      await this.fetchLocked();
    });
    queuedForcedFetch.set(this.dir, fetching);
    return fetching;
  }

  /** Marks the mirror stale: the next `fetch()` goes to the host. */
  invalidate(): void {
    lastFetch.set(this.dir, 0);
  }

  /** Deletes the mirror (e.g. when the project is deleted). */
  async destroy(): Promise<void> {
    await this.locked(async () => {
      await rm(this.dir, { recursive: true, force: true });
      lastFetch.delete(this.dir);
    });
  }

  /** When the last fetch into this mirror ended (epoch ms); 0 when none did since it was invalidated. */
  get fetchedAt(): number {
    return lastFetch.get(this.dir) ?? 0;
  }

  private isFresh(): boolean {
    const at = this.fetchedAt;
    return at > 0 && Date.now() - at < this.maxAgeMs;
  }

  private async fetchLocked(): Promise<void> {
    if (await this.created()) await this.fetchInto(this.dir);
    else await this.createLocked();
    lastFetch.set(this.dir, Date.now());
  }

  private fetchInto(gitDir: string): Promise<RunResult> {
    // Branches and sessions' checkpoint refs (the git gateway serves a session its own) are
    // fetched and pruned; refs/svc/keep/* stays.
    return this.remoteGit(['fetch', '--prune', '--no-tags', '--no-write-fetch-head', '--quiet', this.remote.url, ...MIRROR_REFSPECS], { gitDir });
  }

  /**
   * The mirror appears only after its first fetch succeeded (init and fetch in a staging
   * dir, then rename), so an empty mirror never answers "no such branch" for a host it
   * could not reach.
   */
  private async createLocked(): Promise<void> {
    const parent = path.dirname(this.dir);
    await mkdir(parent, { recursive: true });
    await rm(this.dir, { recursive: true, force: true }); // a dir without HEAD is not a mirror
    const staging = await mkdtemp(path.join(parent, `.init-${path.basename(this.dir)}-`));
    try {
      await initBare(staging);
      await this.fetchInto(staging);
      await rename(staging, this.dir);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  }

  private created(): Promise<boolean> {
    return exists(path.join(this.dir, 'HEAD'));
  }

  /** Under the lock: the mirror exists (fetched once). */
  private async ensureCreatedLocked(): Promise<void> {
    if (!(await this.created())) await this.fetchLocked();
  }

  /** Reads need a mirror: the first one creates it with a fetch. */
  private async ready(): Promise<void> {
    if (!(await this.created())) await this.fetch();
  }

  // ---------------------------------------------------------------- reads

  /** The tip of branch `name`, or null when there is no such branch. */
  async resolveBranch(name: string): Promise<string | null> {
    assertBranchName(name);
    await this.ready();
    const [sha] = await this.resolveAll([`refs/heads/${name}`]);
    return sha ?? null;
  }

  /** A branch name or full commit id -> the commit sha; RefNotFoundError otherwise. */
  async resolveCommit(rev: string): Promise<string> {
    const [sha] = await this.resolveRevisions([rev]);
    return sha!;
  }

  /**
   * A commit by an abbreviated id (7 to 39 hex digits, as git takes one, e.g. from `git log
   * --oneline`); null when it is not such an id or no single commit has it (none, or ambiguous).
   */
  async resolveAbbreviatedCommit(prefix: string): Promise<string | null> {
    if (!/^[0-9a-f]{7,39}$/.test(prefix)) return null;
    await this.ready();
    const [sha] = await this.resolveAll([prefix]);
    return sha ?? null;
  }

  /** Every branch of the mirror with its tip. */
  async branches(): Promise<Record<string, string>> {
    await this.ready();
    const { stdout } = await this.git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/']);
    const out: Record<string, string> = {};
    for (const line of stdout.toString('utf8').split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) out[line.slice(space + 1).replace(/^refs\/heads\//, '')] = line.slice(0, space);
    }
    return out;
  }

  /**
   * File content (UTF-8) at `rev`:`filePath`, or null when there is no such file. With `maxBytes`
   * (content that may be hostile: an agent's branch), its size is read first (one more git
   * process) and a larger file is left unread: `{ bytes }`.
   */
  async readFile(rev: string, filePath: string): Promise<string | null>;
  async readFile(rev: string, filePath: string, maxBytes: number): Promise<string | BlobTooLarge | null>;
  async readFile(rev: string, filePath: string, maxBytes?: number): Promise<string | BlobTooLarge | null> {
    const problem = treePathProblem(filePath);
    if (problem) throw new InvalidInputError(`path '${filePath}'`, problem);
    const [sha] = await this.resolveRevisions([rev]);
    let spec = `${sha}:${filePath}`;
    if (maxBytes !== undefined) {
      const { stdout } = await this.git(['cat-file', '--batch-check'], { input: `${spec}\n` });
      const header = objectHeader(stdout.toString('utf8').trim());
      if (header?.type !== 'blob') return null;
      if (header.size > maxBytes) return { bytes: header.size };
      spec = header.sha;
    }
    const [blob] = parseCatFileBatch((await this.git(['cat-file', '--batch'], { input: `${spec}\n` })).stdout, 1);
    return blob?.type === 'blob' ? blob.content.toString('utf8') : null;
  }

  /**
   * The tip of branch `name` and `files` (UTF-8) at that tip, read under the mirror's lock, so no
   * fetch moves the branch between the reads: by one git process, or with `maxBytes` (content
   * that may be hostile) by two, the first reading every size, and a larger file is left unread
   * (`{ bytes }`). `sha` null: no such branch; a file null: not in that commit.
   */
  async readBranchFiles(name: string, files: readonly string[]): Promise<{ sha: string | null; files: (string | null)[] }>;
  async readBranchFiles(name: string, files: readonly string[], maxBytes: number): Promise<{ sha: string | null; files: (string | BlobTooLarge | null)[] }>;
  async readBranchFiles(name: string, files: readonly string[], maxBytes?: number): Promise<{ sha: string | null; files: (string | BlobTooLarge | null)[] }> {
    assertBranchName(name);
    for (const file of files) {
      const problem = treePathProblem(file);
      if (problem) throw new InvalidInputError(`path '${file}'`, problem);
    }
    await this.ready();
    const ref = `refs/heads/${name}`;
    const specs = [`${ref}^{commit}`, ...files.map((file) => `${ref}:${file}`)];
    return this.locked(async () => {
      if (maxBytes === undefined) {
        const { stdout } = await this.git(['cat-file', '--batch'], { input: specs.map((spec) => `${spec}\n`).join('') });
        const [commit, ...blobs] = parseCatFileBatch(stdout, specs.length);
        if (commit?.type !== 'commit') return { sha: null, files: files.map(() => null) };
        return { sha: commit.sha, files: blobs.map((b) => (b?.type === 'blob' ? b.content.toString('utf8') : null)) };
      }
      const { stdout } = await this.git(['cat-file', '--batch-check'], { input: specs.map((spec) => `${spec}\n`).join('') });
      const [commit, ...headers] = stdout.toString('utf8').split('\n').slice(0, specs.length).map(objectHeader);
      if (commit?.type !== 'commit') return { sha: null, files: files.map(() => null) };
      const readable = headers.filter((h): h is NonNullable<typeof h> => h?.type === 'blob' && h.size <= maxBytes);
      const blobs = readable.length ? parseCatFileBatch((await this.git(['cat-file', '--batch'], { input: readable.map((h) => `${h.sha}\n`).join('') })).stdout, readable.length) : [];
      return {
        sha: commit.sha,
        files: files.map((_, i) => {
          const header = headers[i];
          if (header?.type !== 'blob') return null;
          if (header.size > maxBytes) return { bytes: header.size };
          const blob = blobs[readable.indexOf(header)];
          return blob?.type === 'blob' ? blob.content.toString('utf8') : null;
        }),
      };
    });
  }

  /** True when `ancestor` is reachable from `descendant` (also when equal). */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const [a, d] = await this.resolveRevisions([ancestor, descendant]);
    const { exitCode } = await this.git(['merge-base', '--is-ancestor', a!, d!], { okExitCodes: [0, 1] });
    return exitCode === 0;
  }

  /**
   * How `head` reached `base`, when it did (a merge by svc whose status write was lost, or a merge
   * outside svc): the first commit on base's first-parent chain that contains head. A three-way
   * merge gives that commit and its first parent; a fast-forward (head itself on the chain) gives
   * head and null (the base before it is not recorded in git). Null when head is not in base.
   */
  async mergeOf(base: string, head: string): Promise<{ mergeCommitSha: string; baseCommitSha: string | null } | null> {
    const [b, h] = await this.resolveRevisions([base, head]);
    if (!(await this.isAncestor(h!, b!))) return null;
    const lines = async (args: string[]) => (await this.git(args)).stdout.toString('utf8').split('\n').filter(Boolean);
    // Newest first: the first-parent chain down to (not including) what head already contains.
    const chain = await lines(['rev-list', '--first-parent', `^${h}`, b!]);
    const descendants = new Set(await lines(['rev-list', '--ancestry-path', `^${h}`, b!]));
    const merge = chain.filter((sha) => descendants.has(sha)).at(-1);
    if (!merge) return { mergeCommitSha: h!, baseCommitSha: null }; // fast-forward
    const [firstParent] = (await lines(['rev-list', '--parents', '-n', '1', merge]))[0]!.split(' ').slice(1);
    // A chain commit right on top of head (its first parent) is a fast-forward followed by more work.
    if (firstParent === h) return { mergeCommitSha: h!, baseCommitSha: null };
    return { mergeCommitSha: merge, baseCommitSha: firstParent ?? null };
  }

  /** Commits on `head` that are not on `base` (`git rev-list --count base..head`). */
  async countAhead(base: string, head: string): Promise<number> {
    const [b, h] = await this.resolveRevisions([base, head]);
    const { stdout } = await this.git(['rev-list', '--count', `${b}..${h}`]);
    return Number(stdout.toString('utf8').trim());
  }

  /** Best common ancestor, or null for unrelated histories. */
  async mergeBase(a: string, b: string): Promise<string | null> {
    const [x, y] = await this.resolveRevisions([a, b]);
    return this.mergeBaseOf(x!, y!);
  }

  /**
   * Diff of `head` against `base`. `three-dot` (default, open and closed CRs): from the
   * merge base, or from the empty tree for unrelated histories. `two-dot`: from `base` itself.
   * Renames are reported as a deletion plus an addition (SPEC statuses only).
   */
  async diff(base: string, head: string, options: DiffOptions = {}): Promise<DiffResult> {
    const [baseSha, headSha] = await this.resolveRevisions([base, head]);
    let from = baseSha!;
    let mergeBase: string | null = null;
    if ((options.mode ?? 'three-dot') === 'three-dot') {
      mergeBase = await this.mergeBaseOf(baseSha!, headSha!);
      from = mergeBase ?? await this.emptyTreeSha();
    }
    const common = ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames'];
    // The file list is read as git writes it too: the first MAX_DIFF_FILES listed, all counted.
    const collector = new DiffFileCollector();
    await streamGit([...BASE_CONFIG, ...common, '--raw', '--numstat', '-z', from, headSha!], { gitDir: this.dir, timeoutMs: this.timeoutMs }, (chunk) => collector.push(chunk));
    const listed = collector.end();
    const { files } = listed;
    // The patch is read as git writes it and cut at the limits: never more than the caps in memory.
    const limiter = new PatchLimiter({ ...DEFAULT_PATCH_LIMITS, ...options.limits });
    let patch = '';
    const emit = async (text: string) => {
      if (text === '') return;
      if (options.onPatch) await options.onPatch(text);
      else patch += text;
    };
    await streamGit([...BASE_CONFIG, ...common, '--patch', from, headSha!], { gitDir: this.dir, timeoutMs: this.timeoutMs }, async (chunk) => {
      await emit(limiter.push(chunk));
      return limiter.full ? 'stop' : undefined;
    });
    await emit(limiter.end());
    files.forEach((file, index) => { file.truncated = limiter.truncated.has(index) || (limiter.full && index >= limiter.fullAt); });
    return {
      base_sha: baseSha!,
      head_sha: headSha!,
      merge_base: mergeBase,
      patch,
      files,
      additions: listed.additions,
      deletions: listed.deletions,
      truncated: listed.total > files.length || files.some((file) => file.truncated),
      ...(listed.total > files.length ? { files_omitted: listed.total - files.length } : {}),
    };
  }

  /** SPEC §4.1 merge preview of `head` into `base`; writes nothing to the mirror. */
  async preview(base: string, head: string): Promise<MergePreview> {
    const [baseSha, headSha] = await this.resolveRevisions([base, head]);
    return this.withQuarantine(async (env) => (await this.analyze(baseSha!, headSha!, env)).preview);
  }

  // ---------------------------------------------------------------- writes

  /**
   * Merges `head` into `base` on the host: fast-forward when head is strictly ahead, else
   * a merge commit (parents base, head). Pushed with a lease on the base tip; the mirror
   * ref moves only after the host accepted. Throws RefNotFoundError, HeadMovedError,
   * NothingToMergeError, MergeConflictError, BaseMovedError, PushRejectedError, UnreachableError.
   */
  async merge(request: MergeRequest): Promise<MergeResult> {
    if (request.message.trim() === '') throw new InvalidInputError('merge message', 'empty');
    if (request.expectedHeadSha !== undefined && !isFullSha(request.expectedHeadSha)) {
      throw new InvalidRefError(request.expectedHeadSha, 'expected head sha must be a full commit id');
    }
    assertBranchName(request.base);
    return this.locked(async () => {
      await this.fetchLocked();
      const [baseSha, headSha] = await this.resolveExisting([request.base, request.head]);
      if (request.expectedHeadSha && request.expectedHeadSha !== headSha) {
        throw new HeadMovedError(request.head, request.expectedHeadSha, headSha!);
      }
      const baseRef = `refs/heads/${request.base}`;
      const result = await this.withQuarantine(async (env, quarantine) => {
        const { preview, tree } = await this.analyze(baseSha!, headSha!, env);
        if (preview.is_up_to_date) throw new NothingToMergeError(request.base, request.head);
        if (!preview.can_merge) throw new MergeConflictError(preview.conflicts, preview.conflicts.length + (preview.conflicts_omitted ?? 0));
        const mergeSha = preview.can_fast_forward ? headSha! : await this.commitMerge(tree!, baseSha!, headSha!, request.message, env);
        if ((await this.pushLanded(baseRef, mergeSha, baseSha!, env)) === 'stale') throw new BaseMovedError(request.base, baseSha!);
        await migrateObjects(quarantine, path.join(this.dir, 'objects'));
        return { merge_commit_sha: mergeSha, base_commit_sha: baseSha!, head_commit_sha: headSha!, fast_forward: preview.can_fast_forward };
      });
      // Compare-and-swap: if the mirror ref moved meanwhile, the next fetch repairs it.
      await this.git(['update-ref', baseRef, result.merge_commit_sha, baseSha!], { okExitCodes: [0, 128] });
      await this.keepLocked([result.base_commit_sha, result.head_commit_sha, result.merge_commit_sha]);
      this.invalidate();
      return result;
    });
  }

  /**
   * Creates branch `name` at `sha` on the host, create-only. Pushing a branch that already
   * exists at `sha` is a no-op (`created: false`); at another commit, BranchExistsError.
   * Branches asked for while the mirror is busy go to the host together, in one push (a host's
   * receive-pack costs about the same for one ref as for many, and more as its refs grow): many
   * sessions starting at once do not queue one push each.
   */
  async pushBranch(name: string, sha: string): Promise<{ created: boolean }> {
    assertBranchName(name);
    if (!isFullSha(sha)) throw new InvalidRefError(sha, 'must be a full commit id');
    return new Promise((resolve, reject) => {
      const queued = queuedBranchPushes.get(this.dir);
      if (queued) {
        queued.push({ name, sha, resolve, reject });
        return;
      }
      const batch: BranchToPush[] = [{ name, sha, resolve, reject }];
      queuedBranchPushes.set(this.dir, batch);
      this.locked(async () => {
        queuedBranchPushes.delete(this.dir); // started: later callers go to the next push
        await this.pushBranchesLocked(batch);
      }).catch((error: unknown) => { for (const item of batch) item.reject(error); });
    });
  }

  /** One push creating every branch of `batch` (each settled with its own outcome). */
  private async pushBranchesLocked(batch: BranchToPush[]): Promise<void> {
    await this.ensureCreatedLocked();
    const shas = [...new Set(batch.map((item) => item.sha))];
    let known = await this.resolveAll(shas);
    if (known.includes(null)) { // a commit pushed since the last fetch
      await this.fetchLocked();
      known = await this.resolveAll(shas);
    }
    const pushable: BranchToPush[] = [];
    for (const item of batch) {
      if (known[shas.indexOf(item.sha)] === null) item.reject(new RefNotFoundError(item.sha));
      else pushable.push(item);
    }
    // one ref per branch name: a second ask for the same branch gets the first one's outcome, checked below
    const byRef = new Map<string, string>();
    for (const item of pushable) if (!byRef.has(`refs/heads/${item.name}`)) byRef.set(`refs/heads/${item.name}`, item.sha);
    if (!byRef.size) return;
    const outcomes = await this.pushNewRefs(byRef);
    const created = [...outcomes].filter(([, outcome]) => outcome === 'ok').map(([ref]) => ref);
    if (created.length) await this.git(['update-ref', '--stdin'], { input: created.map((ref) => `update ${ref} ${byRef.get(ref)}\n`).join('') });
    const stale = [...outcomes].filter(([, outcome]) => outcome === 'stale').map(([ref]) => ref);
    if (stale.length) await this.fetchLocked();
    const tips = new Map(stale.length ? (await this.resolveAll(stale)).map((sha, i) => [stale[i]!, sha]) : []);
    const answered = new Set<string>();
    for (const item of pushable) {
      const ref = `refs/heads/${item.name}`;
      const outcome = outcomes.get(ref)!;
      const first = !answered.has(ref);
      answered.add(ref);
      if (outcome instanceof Error) item.reject(outcome);
      else if ((outcome === 'stale' ? tips.get(ref) : byRef.get(ref)) !== item.sha) item.reject(new BranchExistsError(item.name));
      else item.resolve({ created: outcome === 'ok' && first });
    }
  }

  /**
   * Pushes each ref of `refs` (full name -> sha) create-only, in one push: per ref `ok`,
   * `unchanged` (the host had it at that sha), `stale` (the host has it elsewhere, or lost a race)
   * or the host's refusal. Throws when the host cannot be reached.
   */
  private async pushNewRefs(refs: Map<string, string>): Promise<Map<string, 'ok' | 'unchanged' | 'stale' | Error>> {
    const leases = [...refs.keys()].map((ref) => `--force-with-lease=${ref}:`);
    const result = await this.remoteGit(['push', '--porcelain', '--no-verify', ...leases, this.remote.url, ...[...refs].map(([ref, sha]) => `${sha}:${ref}`)], { okExitCodes: [0, 1] });
    const lines = result.stdout.toString('utf8').split('\n');
    const outcomes = new Map<string, 'ok' | 'unchanged' | 'stale' | Error>();
    for (const [ref] of refs) {
      const status = lines.find((line) => line.includes(`:${ref}\t`));
      if (!status) {
        throw unreachableFrom(result.stderr, this.remote) ?? new GitError('push', result.exitCode, result.stderr);
      }
      if (status.startsWith('=')) outcomes.set(ref, 'unchanged');
      else if (!status.startsWith('!')) outcomes.set(ref, 'ok');
      else {
        const summary = status.split('\t')[2] ?? '';
        if (summary.startsWith('[rejected]') && /stale info|fetch first|non-fast-forward|already exists/.test(summary)) outcomes.set(ref, 'stale');
        // a host that lost a race says "[remote rejected] (failed to update ref)"; an atomic
        // refusal of the others says so too: look at the host before calling it a refusal
        else if ((await this.remoteTip(ref)) !== null) outcomes.set(ref, 'stale');
        else {
          const reason = summary.replace(/^\[[^\]]*\]\s*/, '').replace(/^\((.*)\)$/, '$1') || 'rejected';
          const said = hostMessage(result.stderr);
          outcomes.set(ref, new PushRejectedError(ref, said ? `${reason}: ${said}` : reason));
        }
      }
    }
    return outcomes;
  }

  /**
   * Deletes a session's checkpoint ref (`refs/svc/checkpoints/<session id>`, written by its
   * sandbox through the git gateway) on the host and in the mirror. Idempotent: a ref that is
   * not there is no error. True when the host had one.
   */
  async deleteCheckpoint(sessionId: string): Promise<boolean> {
    return (await this.deleteSessionRefs(sessionId, { branch: false })).length > 0;
  }

  /**
   * The cleanup when a session goes (docs/sessions.md "When a session is deleted"): its
   * checkpoint ref and, with `branch`, its branch `refs/heads/<session id>`, on the host (one
   * push) and in the mirror. Idempotent; answers the refs the host had.
   */
  async deleteSessionRefs(sessionId: string, options: { branch: boolean }): Promise<string[]> {
    assertBranchName(sessionId);
    const refs = [checkpointRef(sessionId), ...(options.branch ? [`refs/heads/${sessionId}`] : [])];
    return this.locked(async () => {
      await this.ensureCreatedLocked();
      const present = await this.remoteRefs(refs);
      if (present.length) {
        const result = await this.remoteGit(['push', '--porcelain', '--no-verify', this.remote.url, ...present.map((ref) => `:${ref}`)], { okExitCodes: [0, 1] });
        const left = result.exitCode === 0 ? [] : await this.remoteRefs(present);
        if (left.length) throw new PushRejectedError(left.join(' '), hostMessage(result.stderr) || 'the host refused to delete it');
      }
      await this.git(['update-ref', '--stdin'], { input: refs.map((ref) => `delete ${ref}\n`).join('') });
      return present;
    });
  }

  /** Keeps commits reachable in the mirror (`refs/svc/keep/<sha>`, never pushed or pruned). */
  async keepAround(shas: string[]): Promise<void> {
    await this.locked(async () => {
      await this.ensureCreatedLocked();
      await this.keepLocked(shas);
    });
  }

  private async keepLocked(shas: string[]): Promise<void> {
    const unique = [...new Set(shas)];
    if (!unique.every(isFullSha)) throw new InvalidRefError(unique.find((sha) => !isFullSha(sha))!, 'must be a full commit id');
    await this.resolveExisting(unique);
    const input = unique.map((sha) => `update refs/svc/keep/${sha} ${sha}\n`).join('');
    await this.git(['update-ref', '--stdin'], { input });
  }

  /**
   * Runs `fn` under the mirror's write lock, the mirror created: no fetch, merge or push of
   * this process runs meanwhile (the git gateway's receive-pack updates refs in it).
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.locked(async () => {
      await this.ensureCreatedLocked();
      return fn();
    });
  }

  /**
   * Runs `fn` with how a git command run in the mirror reaches the host: its URL (no userinfo),
   * `-c` options and environment with the credentials (an SSH key's files exist only meanwhile).
   */
  withHostInvocation<T>(fn: (host: RemoteInvocation & { url: string }) => Promise<T>): Promise<T> {
    return withRemoteInvocation(this.remote, (invocation) => fn({ url: this.remote.url, ...invocation }));
  }

  // ---------------------------------------------------------------- internals

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return writeLocks.run(this.dir, fn);
  }

  private git(args: string[], options: Partial<RunOptions> = {}): Promise<RunResult> {
    return runGit([...BASE_CONFIG, ...args], { gitDir: this.dir, timeoutMs: this.timeoutMs, ...options });
  }

  /** A fetch or push: credentials through the environment, failures classified. */
  private async remoteGit(args: string[], options: Partial<RunOptions> = {}): Promise<RunResult> {
    return withRemoteInvocation(this.remote, async ({ configArgs, env, secrets }) => {
      try {
        return await this.git([...configArgs, ...args], {
          timeoutMs: this.remoteTimeoutMs,
          secrets,
          ...options,
          env: { ...options.env, ...env },
        });
      } catch (error) {
        if (error instanceof GitError) throw unreachableFrom(error.stderr, this.remote) ?? error;
        throw error;
      }
    });
  }

  /**
   * pushRef, except that a push that failed without an answer (timeout, dropped
   * connection) but did land on the host counts as done: the caller must not report a
   * failure for a merge that is on the base branch.
   */
  private async pushLanded(ref: string, sha: string, expected: string, env: Record<string, string>): Promise<'ok' | 'unchanged' | 'stale'> {
    try {
      return await this.pushRef(ref, sha, expected, env);
    } catch (error) {
      if (!(error instanceof GitEngineError) || error instanceof PushRejectedError) throw error;
      const tip = await this.remoteTip(ref).catch(() => null);
      if (tip === sha) return 'ok';
      throw error;
    }
  }

  /** Pushes `sha` to `ref` with a lease (`expected` null: the ref must not exist). */
  private async pushRef(ref: string, sha: string, expected: string | null, env?: Record<string, string>): Promise<'ok' | 'unchanged' | 'stale'> {
    const lease = `--force-with-lease=${ref}:${expected ?? ''}`;
    const result = await this.remoteGit(['push', '--porcelain', '--no-verify', lease, this.remote.url, `${sha}:${ref}`], { env, okExitCodes: [0, 1] });
    const status = result.stdout.toString('utf8').split('\n').find((line) => line.includes(`\t${sha}:${ref}\t`) || line.includes(`:${ref}\t`));
    if (result.exitCode === 0 && status?.startsWith('=')) return 'unchanged'; // the host already has it
    if (result.exitCode === 0 && status && !status.startsWith('!')) return 'ok';
    if (status?.startsWith('!')) {
      const summary = status.split('\t')[2] ?? '';
      if (summary.startsWith('[rejected]') && /stale info|fetch first|non-fast-forward|already exists/.test(summary)) return 'stale';
      // A host that lost a race reports a generic "[remote rejected] (failed to update ref)": look.
      if ((await this.remoteTip(ref)) !== expected) return 'stale';
      const reason = summary.replace(/^\[[^\]]*\]\s*/, '').replace(/^\((.*)\)$/, '$1') || 'rejected';
      const said = hostMessage(result.stderr);
      throw new PushRejectedError(ref, said ? `${reason}: ${said}` : reason);
    }
    throw unreachableFrom(result.stderr, this.remote) ?? new GitError('push', result.exitCode, result.stderr);
  }

  /** Which of `refs` (full names) exist on the host: one `git ls-remote`. */
  private async remoteRefs(refs: string[]): Promise<string[]> {
    const { stdout } = await this.remoteGit(['ls-remote', '--refs', this.remote.url, ...refs]);
    const found = new Set(stdout.toString('utf8').split('\n').map((line) => line.split('\t')[1]));
    return refs.filter((ref) => found.has(ref));
  }

  /** The host's current value of `ref` (`git ls-remote`), or null when it does not exist. */
  private async remoteTip(ref: string): Promise<string | null> {
    const { stdout } = await this.remoteGit(['ls-remote', '--refs', this.remote.url, ref]);
    const line = stdout.toString('utf8').split('\n').find((l) => l.endsWith(`\t${ref}`));
    return line ? line.split('\t')[0]! : null;
  }

  /** The commit a ref of the mirror points at (any ref, e.g. a checkpoint ref a push just wrote), or null. */
  async refTip(ref: string): Promise<string | null> {
    const [sha] = await this.resolveAll([ref]);
    return sha ?? null;
  }

  /** Resolves refs to commit shas with one `cat-file --batch-check`; null where missing. */
  private async resolveAll(refs: string[]): Promise<(string | null)[]> {
    const input = refs.map((ref) => `${ref}^{commit}\n`).join('');
    const { stdout } = await this.git(['cat-file', '--batch-check'], { input });
    const lines = stdout.toString('utf8').split('\n');
    return refs.map((_, i) => /^([0-9a-f]{40,64}) commit \d+$/.exec(lines[i] ?? '')?.[1] ?? null);
  }

  /** For reads: creates the mirror on first use, then resolves. */
  private async resolveRevisions(revs: string[]): Promise<string[]> {
    const refs = revs.map(revisionToRef);
    await this.ready();
    return this.resolveExisting(revs, refs);
  }

  /** Branch names or full shas -> commit shas; RefNotFoundError for the first missing one. Safe under the lock. */
  private async resolveExisting(revs: string[], refs = revs.map(revisionToRef)): Promise<string[]> {
    const shas = await this.resolveAll(refs);
    const missing = shas.findIndex((sha) => sha === null);
    if (missing >= 0) throw new RefNotFoundError(revs[missing]!);
    return shas as string[];
  }

  private async mergeBaseOf(a: string, b: string): Promise<string | null> {
    const { exitCode, stdout } = await this.git(['merge-base', a, b], { okExitCodes: [0, 1] });
    return exitCode === 0 ? stdout.toString('utf8').trim() : null;
  }

  private emptyTreeSha(): Promise<string> {
    this.emptyTree ??= this.git(['hash-object', '-t', 'tree', '--stdin']).then((r) => r.stdout.toString('utf8').trim());
    return this.emptyTree;
  }

  /** The preview, plus the merged tree when a three-way merge is clean. */
  private async analyze(baseSha: string, headSha: string, env: Record<string, string>): Promise<{ preview: MergePreview; tree: string | null }> {
    const mergeBase = await this.mergeBaseOf(baseSha, headSha);
    const isUpToDate = mergeBase === headSha;
    const canFastForward = mergeBase === baseSha && baseSha !== headSha;
    let conflicts: string[] = [];
    let conflictCount = 0;
    let tree: string | null = null;
    if (!isUpToDate && !canFastForward) {
      const args = ['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages'];
      // Unrelated histories merge like `git merge --allow-unrelated-histories` (empty base).
      if (mergeBase === null) args.push('--allow-unrelated-histories');
      // Read as git writes it: the first MAX_LISTED_CONFLICTS paths listed, all counted.
      const collector = new ConflictCollector();
      const { exitCode } = await streamGit([...BASE_CONFIG, ...args, baseSha, headSha],
        { gitDir: this.dir, timeoutMs: this.timeoutMs, env, okExitCodes: [0, 1] }, (chunk) => collector.push(chunk));
      const merged = collector.end();
      tree = merged.tree;
      if (exitCode === 1) [conflicts, conflictCount] = [merged.paths, merged.total];
    }
    const preview: MergePreview = {
      base_sha: baseSha,
      head_sha: headSha,
      merge_base: mergeBase,
      is_up_to_date: isUpToDate,
      can_merge: conflictCount === 0,
      can_fast_forward: canFastForward,
      conflicts,
      ...(conflictCount > conflicts.length ? { conflicts_omitted: conflictCount - conflicts.length } : {}),
    };
    return { preview, tree };
  }

  private async commitMerge(tree: string, baseSha: string, headSha: string, message: string, env: Record<string, string>): Promise<string> {
    const date = `${Math.floor(this.clock().getTime() / 1000)} +0000`;
    const { name, email } = this.identity;
    const { stdout } = await this.git(['commit-tree', tree, '-p', baseSha, '-p', headSha], {
      input: message.endsWith('\n') ? message : `${message}\n`,
      env: {
        ...env,
        GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email, GIT_COMMITTER_DATE: date,
      },
    });
    return stdout.toString('utf8').trim();
  }

  /**
   * Runs `fn` with new objects going to a temporary object directory (the real one is an
   * alternate for reading), removed afterwards; a merge migrates what it keeps.
   */
  private async withQuarantine<T>(fn: (env: Record<string, string>, quarantine: string) => Promise<T>): Promise<T> {
    const root = path.join(this.dir, 'svc-quarantine');
    await mkdir(root, { recursive: true });
    const quarantine = await mkdtemp(path.join(root, 'q-'));
    try {
      return await fn({ GIT_OBJECT_DIRECTORY: quarantine, GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(this.dir, 'objects') }, quarantine);
    } finally {
      await rm(quarantine, { recursive: true, force: true });
    }
  }
}

/** Moves loose objects (and any packs) from a quarantine into the object directory. */
async function migrateObjects(from: string, to: string): Promise<void> {
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    await mkdir(target, { recursive: true });
    // Packs before their indexes, so a reader never sees an index without its pack.
    const files = (await readdir(source)).sort((a, b) => Number(b.endsWith('.pack')) - Number(a.endsWith('.pack')));
    for (const file of files) {
      if (await exists(path.join(target, file))) await unlink(path.join(source, file));
      else await rename(path.join(source, file), path.join(target, file));
    }
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** What the host's hooks said about a refused push (its `remote:` lines, without git's progress), bounded. */
function hostMessage(stderr: string): string {
  const lines = stderr.split('\n')
    .filter((line) => line.startsWith('remote:'))
    // eslint-disable-next-line no-control-regex -- hooks may colour their output
    .map((line) => line.slice('remote:'.length).replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').trim())
    .filter((line) => line !== '' && !/^(Resolving deltas|Counting objects|Compressing objects|Total \d)/.test(line));
  const text = lines.join(' ');
  return clipText(text, 501);
}

/** The records of `git cat-file --batch` output: one per input line, null for a missing object. */
/** A `cat-file --batch(-check)` header line, `<sha> <type> <size>`; null for `<name> missing`. */
function objectHeader(line: string): { sha: string; type: string; size: number } | null {
  const header = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(line);
  return header ? { sha: header[1]!, type: header[2]!, size: Number(header[3]) } : null;
}

function parseCatFileBatch(out: Buffer, count: number): ({ sha: string; type: string; content: Buffer } | null)[] {
  const records: ({ sha: string; type: string; content: Buffer } | null)[] = [];
  let at = 0;
  while (records.length < count && at < out.length) {
    const newline = out.indexOf(10, at);
    if (newline < 0) break;
    const header = objectHeader(out.subarray(at, newline).toString('utf8'));
    if (!header) { records.push(null); at = newline + 1; continue; } // "<name> missing" (or ambiguous)
    records.push({ sha: header.sha, type: header.type, content: out.subarray(newline + 1, newline + 1 + header.size) });
    at = newline + 1 + header.size + 1;
  }
  while (records.length < count) records.push(null);
  return records;
}

/**
 * What `git init --bare --template=` writes (gitrepository-layout(5)), without a git process: a
 * spawn blocks Node's event loop until git has started (several ms on a busy machine), and a
 * Project's first reconcile spends its time on exactly these.
 */
async function initBare(dir: string): Promise<void> {
  for (const sub of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) await mkdir(path.join(dir, sub), { recursive: true });
  await writeFile(path.join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n');
  await writeFile(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
}
