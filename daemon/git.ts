// The session workspace: clone, branch checkout, refresh (fast-forward only) and status for health.
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { redactUrls } from '../src/lib/redact-url.js';
import { makeDirs } from '../src/lib/make-dirs.js';

export interface GitResult { code: number; stdout: string; stderr: string }

export class GitError extends Error {}

export interface GitOptions {
  /** added to the environment of this call (e.g. GIT_INDEX_FILE) */
  env?: Record<string, string>;
  /** the call is killed after this long */
  timeoutMs?: number;
  /** written to git's stdin */
  input?: string;
}

/** Redacts URL credentials (userinfo, ?token=...) so nothing secret reaches a log or a response. */
export { redactUrls };

export interface WorkspaceOptions {
  workspace: string;
  branch: string;
  baseRef: string | undefined;
  repoUrl: string | undefined;
  sessionId: string;
  agentName: string | undefined;
  /** value of credential.helper for the repository, when the remote needs a credential */
  credentialHelper: string | undefined;
  /** added to the environment of every git call, asked at each call (the boot's credential) */
  gitEnv?: () => Record<string, string>;
  /** a ref the clone also fetches when the remote has it (the session's checkpoint): one round trip, not two */
  cloneAlso?: string;
}

export type RefreshOutcome =
  | { outcome: 'fast-forwarded'; from: string; to: string }
  | { outcome: 'up-to-date'; commit: string }
  | { outcome: 'diverged'; local: string; remote: string }
  | { outcome: 'blocked'; local: string; remote: string; reason: string };

export class Workspace {
  /** What the clone of this boot fetched besides the branches (null: no clone, or nothing else). */
  private clonedAlso: string | null = null;

  constructor(private readonly options: WorkspaceOptions) {}

  /** Whether this boot's clone fetched `ref` too (as the remote had it then: present, or known absent). */
  fetchedWithClone(ref: string): boolean {
    return this.clonedAlso === ref;
  }

  git(args: string[], allowFailure = false, options: GitOptions = {}): Promise<GitResult> {
    const helperConfig = this.options.credentialHelper === undefined
      ? []
      : ['-c', 'credential.helper=', '-c', `credential.helper=${this.options.credentialHelper}`];
    return new Promise((resolve, reject) => {
      const child = spawn('git', [...helperConfig, ...args], {
        cwd: existsSync(this.options.workspace) ? this.options.workspace : '/',
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', SSH_ASKPASS: '', ...this.options.gitEnv?.(), ...options.env },
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const timer = options.timeoutMs === undefined ? null : setTimeout(() => {
        stderr += `\n(timed out after ${options.timeoutMs} ms)`;
        child.kill('SIGKILL');
      }, options.timeoutMs);
      if (options.input !== undefined) child.stdin!.end(options.input);
      child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
      child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
      child.on('error', reject);
      child.on('close', (code) => {
        if (timer) clearTimeout(timer);
        const result = { code: code ?? 1, stdout, stderr: redactUrls(stderr) };
        if (result.code !== 0 && !allowFailure) {
          reject(new GitError(`git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? args[0]} failed (exit ${result.code}): ${result.stderr.trim()}`));
        } else resolve(result);
      });
    });
  }

  get directory(): string {
    return this.options.workspace;
  }

  isRepository(): boolean {
    return existsSync(path.join(this.options.workspace, '.git'));
  }

  /**
   * Clones into an empty workspace (or reuses an earlier clone), configures it and checks out the
   * session branch. True when the working tree is a fresh checkout (nothing of an earlier boot in it).
   */
  async prepare(): Promise<boolean> {
    const { workspace, repoUrl, branch } = this.options;
    const fresh = !this.isRepository();
    if (fresh) {
      if (!repoUrl) throw new GitError('no repository to clone (SVC_REPO_URL is not set)');
      makeDirs(workspace);
      if (readdirSync(workspace).length > 0) throw new GitError(`workspace ${workspace} is not empty and not a git repository`);
      const also = this.options.cloneAlso;
      // a pattern, not the ref itself: a ref the remote does not have is no error
      const alsoSpec = also ? `+${also}*:${also}*` : null;
      // the clone writes the repository's settings itself (a git process per setting otherwise)
      const settings = this.settings().flatMap(([key, value]) => ['-c', `${key}=${value}`]);
      // protocol version 0: the refs come with info/refs, one round trip through the gateway fewer than
      // version 2's ls-refs (docs/daemon.md); for this process only, the agent's own git keeps version 2
      // a transfer that stalls for a minute fails (and is tried again) instead of hanging the start
      // the extra refspec for this clone only (before `clone`: not written to the repository's
      // config, so the agent's own fetches stay as usual)
      await this.git(['-c', 'protocol.version=0', '-c', 'http.lowSpeedLimit=1', '-c', 'http.lowSpeedTime=60', ...(alsoSpec ? ['-c', `remote.origin.fetch=${alsoSpec}`] : []), 'clone', '--quiet', '--no-checkout', ...settings, '--', repoUrl, workspace]);
      if (alsoSpec) this.clonedAlso = also!;
      // the usual case, in one git process: the controller pushed the session branch before the clone
      if ((await this.git(['checkout', '--quiet', '-f', '-b', branch, '--track', `origin/${branch}`], true)).code === 0) return true;
    }
    if (!fresh) await this.configure();
    const current = (await this.git(['symbolic-ref', '--quiet', '--short', 'HEAD'], true)).stdout.trim();
    const hasLocal = (await this.git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], true)).code === 0;
    if (!fresh && current === branch && hasLocal) return false; // an earlier boot set it up: keep local work
    if (hasLocal) {
      // -f after a --no-checkout clone: populate the still-empty working tree
      await this.git(['checkout', '--quiet', ...(fresh ? ['-f'] : []), branch]);
      return fresh;
    }
    const upstream = (await this.git(['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}`], true)).code === 0;
    if (upstream) {
      await this.git(['checkout', '--quiet', '-b', branch, '--track', `origin/${branch}`]);
      return fresh;
    }
    const base = await this.resolveBase();
    await this.git(['checkout', '--quiet', '-b', branch, base]);
    const pushed = await this.git(['push', '--quiet', '--set-upstream', 'origin', `refs/heads/${branch}:refs/heads/${branch}`], true);
    if (pushed.code !== 0) {
      // the Session controller pushes the branch while the sandbox starts: when it won the race,
      // the branch is there now, and this checkout takes it (nothing was done on the local one yet)
      const fetched = await this.git(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`], true);
      if (fetched.code !== 0) throw new GitError(`git push failed (exit ${pushed.code}): ${pushed.stderr.trim()}`);
      await this.git(['checkout', '--quiet', '-f', '-B', branch, '--track', `origin/${branch}`]);
    }
    return fresh;
  }

  /** Empties the workspace after a failed first clone, keeping the folder (a mount point in a sandbox). */
  clear(): void {
    for (const entry of readdirSync(this.options.workspace)) rmSync(path.join(this.options.workspace, entry), { recursive: true, force: true });
  }

  private async resolveBase(): Promise<string> {
    const candidates = [];
    const base = this.options.baseRef;
    if (base) candidates.push(`refs/remotes/origin/${base.replace(/^refs\/heads\//, '')}`, base);
    candidates.push('refs/remotes/origin/HEAD');
    for (const ref of candidates) {
      const r = await this.git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], true);
      if (r.code === 0) return r.stdout.trim();
    }
    throw new GitError(`the session branch does not exist upstream and the base ref ${JSON.stringify(base ?? '(unset)')} was not found`);
  }

  /** The repository's settings: who commits, and that the agent's own `git push` asks the daemon (inherited helpers reset first). */
  private settings(): [string, string][] {
    const { sessionId, agentName, credentialHelper } = this.options;
    return [
      ['user.name', agentName ? `svc agent (${agentName})` : 'svc agent'],
      ['user.email', `session-${sessionId}@svc.invalid`],
      ...(credentialHelper === undefined ? [] : [['credential.helper', ''], ['credential.helper', credentialHelper]] as [string, string][]),
    ];
  }

  /** The settings on a repository of an earlier boot. */
  private async configure(): Promise<void> {
    await this.git(['config', '--unset-all', 'credential.helper'], true);
    for (const [key, value] of this.settings()) await this.git(['config', ...(key === 'credential.helper' ? ['--add'] : []), key, value]);
  }

  /** Pulls the session branch, fast-forward only. A diverged or blocked workspace is left untouched. */
  async refresh(): Promise<RefreshOutcome> {
    const { branch } = this.options;
    await this.git(['fetch', '--quiet', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`]);
    const local = (await this.git(['rev-parse', 'HEAD'])).stdout.trim();
    const remote = (await this.git(['rev-parse', `refs/remotes/origin/${branch}`])).stdout.trim();
    if (local === remote) return { outcome: 'up-to-date', commit: local };
    if ((await this.git(['merge-base', '--is-ancestor', remote, local], true)).code === 0) return { outcome: 'up-to-date', commit: local };
    if ((await this.git(['merge-base', '--is-ancestor', local, remote], true)).code !== 0) return { outcome: 'diverged', local, remote };
    const merged = await this.git(['merge', '--ff-only', '--quiet', remote], true);
    if (merged.code !== 0) return { outcome: 'blocked', local, remote, reason: merged.stderr.trim() };
    return { outcome: 'fast-forwarded', from: local, to: remote };
  }

  /** Branch and commit for health; nulls when the workspace is not a repository (yet). */
  async status(): Promise<{ branch: string | null; commit: string | null }> {
    if (!this.isRepository()) return { branch: null, commit: null };
    // read from the repository's files (every health read asks: a git process each time otherwise);
    // anything unusual (a .git file, a ref in neither form) asks git
    const read = readHead(path.join(this.options.workspace, '.git'));
    if (read) return read;
    const r = await this.git(['rev-parse', 'HEAD', '--abbrev-ref', 'HEAD'], true);
    const [commit, branch] = r.stdout.trim().split('\n');
    return { branch: r.code === 0 ? branch ?? null : null, commit: r.code === 0 ? commit ?? null : null };
  }
}

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * HEAD's branch ('HEAD' when detached, as `git rev-parse --abbrev-ref` says) and commit, from the
 * files of `gitDir`; null when git must say. The agent owns these files: only regular files are
 * read (a FIFO would block svc-agent), and only what looks like an object id is believed.
 */
export function readHead(gitDir: string): { branch: string; commit: string } | null {
  const text = (file: string) => {
    const full = path.join(gitDir, file);
    try { return lstatSync(full).isFile() ? readFileSync(full, 'utf8').trim() : null; } catch { return null; }
  };
  const head = text('HEAD');
  if (!head) return null;
  if (OBJECT_ID.test(head)) return { branch: 'HEAD', commit: head };
  const ref = /^ref: (refs\/heads\/\S+)$/.exec(head)?.[1];
  if (!ref || ref.split('/').includes('..')) return null;
  const branch = ref.slice('refs/heads/'.length);
  const loose = text(ref);
  if (loose && OBJECT_ID.test(loose)) return { branch, commit: loose };
  for (const line of (text('packed-refs') ?? '').split('\n')) {
    const [sha, name] = line.split(' ');
    if (name === ref && sha && OBJECT_ID.test(sha)) return { branch, commit: sha };
  }
  return null; // an unborn branch, or something git knows better
}
