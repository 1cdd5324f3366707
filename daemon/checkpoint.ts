// Checkpoints of the working tree (DESIGN §8.3, docs/sessions.md "Checkpoints"): a commit whose
// first parent is HEAD and whose tree is the working tree as `git add -A` sees it (changed,
// deleted and untracked files, .gitignore respected), made with a private index (never the
// agent's index, HEAD or branch) and pushed through the git gateway to
// refs/svc/checkpoints/<session id>, rewriting it. The engine's conversation rides along as the
// checkpoint's second parent (a commit of its own, daemon/conversation.ts). On boot a new sandbox
// of the session restores the tree on top of the checkout when the checkpoint's parent is the
// branch tip, as uncommitted changes; else it leaves it and says why.
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DaemonCheckpoint } from '../src/lib/daemon-health.js';
import { checkpointRef } from '../src/lib/session-refs.js';
import type { CheckpointPolicy } from './config.js';
import { GitError, type Workspace } from './git.js';
import { transientCause } from '../src/lib/start-retry.js';
import { makeDirs } from '../src/lib/make-dirs.js';

export type CheckpointReason = 'turn' | 'interval' | 'stop';

/** A file of the conversation tree (flat: names without slashes). */
export interface ConversationFile { name: string; content: string }

export interface ConversationStore {
  /** The conversation as files, or null when there is none yet (no root session). Throws when the engine cannot say. */
  export(): Promise<ConversationFile[] | null>;
  /** Whether this sandbox's engine lacks the conversation (a fresh engine home). */
  needsRestore(): boolean;
  /** Hands the saved conversation to the engine before it starts; the number of messages restored. */
  restore(files: ConversationFile[]): Promise<{ sessionId: string; messages: number }>;
}

/** What GET /svc/health says of checkpoints (the shared schema, src/lib/daemon-health.ts). */
export type CheckpointReport = DaemonCheckpoint;

interface Known {
  sha: string;
  at: string;
  tree: string;
  head: string;
  conversationCommit: string | null;
  conversationTree: string | null;
  preserves: string[];
}

// Checkpoints skipped on boot stay reachable from the next ones (at most this many), so their
// uncommitted work is not lost by a rewrite of the ref.
const MAX_PRESERVED = 3;
const NO_HOOKS = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'];
const FULL_SHA = /^[0-9a-f]{40}$/;

export class Checkpointer {
  readonly ref: string;
  private known: Known | null = null;
  private restored: CheckpointReport['restored'] = null;
  private skipped: CheckpointReport['skipped'] = null;
  private conversationRestored: CheckpointReport['conversation']['restored'] = null;
  private conversationError: string | null = null;
  private writes = 0;
  private lastError: CheckpointReport['last_error'] = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly indexFile: string;
  private readonly recordFile: string;

  constructor(
    private readonly workspace: Workspace,
    private readonly options: { sessionId: string; stateDir: string; policy: CheckpointPolicy; conversation: ConversationStore | null; now?: () => Date },
  ) {
    this.ref = checkpointRef(options.sessionId);
    this.indexFile = path.join(options.stateDir, 'checkpoint.index');
    this.recordFile = path.join(options.stateDir, 'checkpoint.json');
    // a daemon restarted in the same sandbox knows what it pushed last
    try {
      const record = JSON.parse(readFileSync(this.recordFile, 'utf8')) as Known;
      if (FULL_SHA.test(record.sha)) this.known = record;
    } catch { /* none yet */ }
  }

  get enabled(): boolean {
    return this.options.policy.enabled;
  }

  report(): CheckpointReport {
    return {
      enabled: this.enabled,
      ref: this.ref,
      sha: this.known?.sha ?? null,
      at: this.known?.at ?? null,
      restored: this.restored,
      skipped: this.skipped,
      conversation: { restored: this.conversationRestored, error: this.conversationError },
      writes: this.writes,
      last_error: this.lastError,
    };
  }

  private git(args: string[], allowFailure = false, env?: Record<string, string>, timeoutMs = 60_000) {
    return this.workspace.git([...NO_HOOKS, ...args], allowFailure, { env, timeoutMs });
  }

  private async out(args: string[], env?: Record<string, string>): Promise<string> {
    return (await this.git(args, false, env)).stdout.trim();
  }

  private fail(err: unknown): void {
    const message = (err as Error).message;
    this.lastError = { at: (this.options.now?.() ?? new Date()).toISOString(), message };
    process.stderr.write(`svc-agent: checkpoint: ${message}\n`);
  }

  /**
   * Writes and pushes a checkpoint unless nothing changed since the last one (an `interval`
   * checkpoint only when the tree changed). One at a time; resolves to what happened.
   */
  save(reason: CheckpointReason): Promise<'written' | 'unchanged' | 'off' | 'failed'> {
    if (!this.enabled) return Promise.resolve('off');
    const run = this.queue.then(() => this.saveNow(reason));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async saveNow(reason: CheckpointReason): Promise<'written' | 'unchanged' | 'failed'> {
    try {
      if (!this.workspace.isRepository()) return 'unchanged';
      const head = (await this.git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], true)).stdout.trim();
      if (!FULL_SHA.test(head)) return 'unchanged'; // an unborn branch: nothing to stand on
      const tree = await this.worktreeTree(head);
      const known = this.known;
      if (reason === 'interval' && tree === (known?.tree ?? (await this.out(['rev-parse', `${head}^{tree}`])))) return 'unchanged';
      const conversation = await this.conversationCommit();
      const unchanged = known
        ? known.tree === tree && known.head === head && known.conversationCommit === conversation.commit
        : conversation.commit === null && tree === (await this.out(['rev-parse', `${head}^{tree}`]));
      if (unchanged) return 'unchanged';
      const preserves = (known?.preserves ?? []).slice(0, MAX_PRESERVED);
      // a commit's time has whole seconds: the same instant on every reader
      const at = new Date(Math.floor((this.options.now?.() ?? new Date()).getTime() / 1000) * 1000);
      const message = [
        `svc checkpoint of session ${this.options.sessionId} (${reason})`,
        '',
        `svc-checkpoint: 1`,
        ...(conversation.commit ? [`svc-conversation: ${conversation.commit}`] : []),
        ...preserves.map((sha) => `svc-preserves: ${sha}`),
      ].join('\n');
      const parents = [head, ...(conversation.commit ? [conversation.commit] : []), ...preserves];
      const sha = await this.out(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message], this.identity(at));
      await this.git(['push', '--quiet', '--no-verify', 'origin', `+${sha}:${this.ref}`], false, undefined, 120_000);
      this.remember({ sha, at: at.toISOString(), tree, head, conversationCommit: conversation.commit, conversationTree: conversation.tree, preserves });
      this.writes++;
      this.lastError = null;
      return 'written';
    } catch (err) {
      this.fail(err);
      return 'failed';
    }
  }

  private identity(at: Date): Record<string, string> {
    const date = `${Math.floor(at.getTime() / 1000)} +0000`;
    const email = `session-${this.options.sessionId}@svc.invalid`;
    return {
      GIT_AUTHOR_NAME: 'svc checkpoint', GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: 'svc checkpoint', GIT_COMMITTER_EMAIL: email, GIT_COMMITTER_DATE: date,
    };
  }

  /** The working tree as a tree object, through the daemon's own index (the agent's is only read, once, for its stat cache). */
  private async worktreeTree(head: string): Promise<string> {
    makeDirs(path.dirname(this.indexFile), 0o700);
    const env = { GIT_INDEX_FILE: this.indexFile };
    if (!existsSync(this.indexFile)) {
      const agentIndex = path.join(this.workspace.directory, '.git', 'index');
      if (existsSync(agentIndex)) {
        copyFileSync(agentIndex, this.indexFile);
        // with the original's mtime: git rechecks an entry no older than its index ("racily
        // clean"); a copy made now would vouch for a file rewritten since in the same second
        // with the same size (keep.txt v1 -> v2 was then left out of the checkpoint)
        const { atime, mtime } = statSync(agentIndex);
        utimesSync(this.indexFile, atime, mtime);
      } else await this.git(['read-tree', head], false, env);
    }
    // --ignore-errors: an unreadable file is left out rather than failing the whole checkpoint
    const added = await this.git(['add', '-A', '--ignore-errors', '--', ':/'], true, env);
    if (added.code !== 0 && !/error: unable to (index|read)|warning:/.test(added.stderr)) {
      rmSync(this.indexFile, { force: true }); // start from the agent's index next time
      throw new Error(`git add failed: ${added.stderr.trim().slice(0, 500)}`);
    }
    return this.out(['write-tree'], env);
  }

  /** The conversation as a root commit; the last one again when unchanged or when the engine cannot say (a stuck engine). */
  private async conversationCommit(): Promise<{ commit: string | null; tree: string | null }> {
    const keep = { commit: this.known?.conversationCommit ?? null, tree: this.known?.conversationTree ?? null };
    const store = this.options.conversation;
    if (!store) return keep;
    let files: ConversationFile[] | null;
    try {
      files = await store.export();
    } catch (err) {
      this.conversationError = `the conversation could not be saved: ${(err as Error).message}`;
      return keep;
    }
    if (!files || files.length === 0) return keep;
    this.conversationError = null;
    const shas = await this.hashBlobs(files.map((f) => f.content));
    const listing = files.map((f, i) => `100644 blob ${shas[i]}\t${f.name}\n`).join('');
    const tree = (await this.workspace.git([...NO_HOOKS, 'mktree'], false, { input: listing })).stdout.trim();
    if (tree === keep.tree && keep.commit) return keep;
    const at = this.options.now?.() ?? new Date();
    const commit = await this.out(['commit-tree', tree, '-m', `svc conversation of session ${this.options.sessionId}`], this.identity(at));
    return { commit, tree };
  }

  /** Writes blobs in one git call (hash-object --stdin-paths over files in the state dir). */
  private async hashBlobs(contents: string[]): Promise<string[]> {
    const dir = path.join(this.options.stateDir, 'conversation-blobs');
    rmSync(dir, { recursive: true, force: true });
    makeDirs(dir, 0o700);
    try {
      const paths = contents.map((content, i) => {
        const file = path.join(dir, String(i));
        writeFileSync(file, content, { mode: 0o600 });
        return file;
      });
      const out = (await this.workspace.git([...NO_HOOKS, 'hash-object', '-w', '--no-filters', '--stdin-paths'], false, { input: `${paths.join('\n')}\n` })).stdout.trim();
      const shas = out.split('\n');
      if (shas.length !== contents.length || !shas.every((s) => FULL_SHA.test(s))) throw new Error('git hash-object gave an unexpected answer');
      return shas;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private remember(known: Known): void {
    this.known = known;
    makeDirs(path.dirname(this.recordFile), 0o700);
    const tmp = `${this.recordFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(known), { mode: 0o600 });
    renameSync(tmp, this.recordFile);
  }

  /**
   * On boot, after the checkout and before the engine starts: fetches the session's checkpoint;
   * restores the conversation when the engine home lacks it, and the tree when the checkpoint
   * stands on the branch tip and the checkout is fresh.
   */
  async restore(freshCheckout: boolean): Promise<void> {
    if (!this.enabled || !this.workspace.isRepository()) return;
    const started = Date.now();
    await this.restoreNow(freshCheckout);
    const what = this.restored ? `restored ${this.restored.sha}` : this.skipped ? `skipped ${this.skipped.sha ?? ''}` : 'none';
    process.stderr.write(`svc-agent: checkpoint on boot: ${what} (${Date.now() - started} ms)\n`);
  }

  private async restoreNow(freshCheckout: boolean): Promise<void> {
    if (freshCheckout && this.workspace.fetchedWithClone(this.ref)) {
      // the clone brought it, or found none: no second round trip
      if ((await this.git(['rev-parse', '--verify', '--quiet', `${this.ref}^{commit}`], true)).code !== 0) return;
    } else {
      if (!await this.fetchCheckpoint()) return;
    }
    await this.restoreFetched(freshCheckout);
  }

  /** Fetches the session's checkpoint ref; false when there is none, or it could not be fetched (then `skipped` says why). */
  private async fetchCheckpoint(): Promise<boolean> {
    const fetched = await this.git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', 'origin', `+${this.ref}:${this.ref}`], true, undefined, 120_000);
    if (fetched.code !== 0) {
      if (/couldn't find remote ref|no such ref|not our ref/i.test(fetched.stderr)) return false; // no checkpoint yet
      // the API or the host away for a moment: the start tries again rather than lose the work
      if (transientCause(fetched.stderr) !== null) throw new GitError(`git fetch of ${this.ref} failed (exit ${fetched.code}): ${fetched.stderr.trim().slice(0, 300)}`);
      this.skipped = { sha: null, reason: `the checkpoint could not be fetched: ${fetched.stderr.trim().slice(0, 300)}` };
      this.fail(new Error(this.skipped.reason));
      return false;
    }
    return true;
  }

  private async restoreFetched(freshCheckout: boolean): Promise<void> {
    let checkpoint: Known;
    try {
      checkpoint = await this.read(this.ref);
    } catch (err) {
      this.skipped = { sha: null, reason: `the checkpoint ref does not hold a checkpoint: ${(err as Error).message}` };
      return;
    }
    if (this.known?.sha !== checkpoint.sha) this.known = checkpoint;
    await this.restoreConversation(checkpoint);
    const tip = (await this.git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], true)).stdout.trim();
    const short = (sha: string) => sha.slice(0, 12);
    if (checkpoint.head !== tip) {
      const ahead = FULL_SHA.test(tip) && (await this.git(['merge-base', '--is-ancestor', tip, checkpoint.head], true)).code === 0;
      const reason = ahead
        ? `the checkpoint stands on commit ${short(checkpoint.head)}, which was never pushed to the branch (at ${short(tip)}); its uncommitted work is left in the checkpoint`
        : `the branch moved since the checkpoint: it stands on ${short(checkpoint.head)}, the branch is at ${short(tip || 'nothing')}; its uncommitted work is left in the checkpoint`;
      this.skip(checkpoint, reason);
      return;
    }
    if (!freshCheckout) {
      this.skip(checkpoint, 'the working tree of an earlier start of this sandbox is still there (newer than the checkpoint); it is kept');
      return;
    }
    // as uncommitted changes: HEAD, the branch and the agent's index stay as the checkout left them
    if (checkpoint.tree !== (await this.out(['rev-parse', `${tip}^{tree}`]))) {
      await this.git(['restore', `--source=${checkpoint.sha}`, '--worktree', '--', ':/']);
    }
    this.restored = { sha: checkpoint.sha, at: checkpoint.at };
    this.known = checkpoint;
  }

  private skip(checkpoint: Known, reason: string): void {
    this.skipped = { sha: checkpoint.sha, reason };
    process.stderr.write(`svc-agent: checkpoint ${checkpoint.sha} not restored: ${reason}\n`);
    // its work stays reachable from the checkpoints this sandbox writes
    this.known = { ...checkpoint, preserves: [checkpoint.sha, ...checkpoint.preserves.filter((s) => s !== checkpoint.sha)].slice(0, MAX_PRESERVED) };
  }

  private async restoreConversation(checkpoint: Known): Promise<void> {
    const store = this.options.conversation;
    if (!store || !checkpoint.conversationCommit || !store.needsRestore()) return;
    try {
      const started = Date.now();
      const done = await store.restore(await this.readFiles(checkpoint.conversationCommit));
      process.stderr.write(`svc-agent: conversation ${done.sessionId} restored, ${done.messages} messages (${Date.now() - started} ms)\n`);
      this.conversationRestored = { sha: checkpoint.conversationCommit, session_id: done.sessionId, messages: done.messages };
    } catch (err) {
      this.conversationError = `the conversation could not be restored: ${(err as Error).message}`;
      process.stderr.write(`svc-agent: ${this.conversationError}\n`);
    }
  }

  /** The files of a (flat) tree, through a scratch index and directory in the state dir: two git calls whatever their number. */
  private async readFiles(treeish: string): Promise<ConversationFile[]> {
    const dir = path.join(this.options.stateDir, 'conversation-files');
    const index = path.join(this.options.stateDir, 'conversation.index');
    rmSync(dir, { recursive: true, force: true });
    makeDirs(dir, 0o700);
    try {
      const env = { GIT_INDEX_FILE: index };
      await this.git(['read-tree', treeish], false, env);
      await this.git(['checkout-index', '--all', '--force', `--prefix=${dir}/`], false, env);
      return readdirSync(dir).filter((name) => !name.includes('/')).sort().map((name) => ({ name, content: readFileSync(path.join(dir, name), 'utf8') }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(index, { force: true });
    }
  }

  /** A checkpoint commit: its tree, the commit it stands on, its conversation and what it preserves (from its trailers). */
  private async read(rev: string): Promise<Known> {
    const out = await this.out(['show', '-s', '--format=%H%n%T%n%P%n%cI%n%B', rev]);
    const [sha, tree, parents, at, ...body] = out.split('\n');
    const trailers = (name: string) => body.filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2).trim()).filter((s) => FULL_SHA.test(s));
    if (!body.includes('svc-checkpoint: 1')) throw new Error(`${rev} is no svc checkpoint`);
    const [head] = (parents ?? '').split(' ');
    const conversationCommit = trailers('svc-conversation')[0] ?? null;
    const conversationTree = conversationCommit ? await this.out(['rev-parse', `${conversationCommit}^{tree}`]) : null;
    return {
      sha: sha!, tree: tree!, head: head!, at: new Date(at!).toISOString(),
      conversationCommit, conversationTree, preserves: trailers('svc-preserves').slice(0, MAX_PRESERVED),
    };
  }
}
