// Real repositories for the git engine tests: a bare "host" repository and working
// clones that commit and push to it, with a fixed identity and default branch.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openMirror, type Mirror, type MirrorOptions } from '../../src/git/index.js';

const IDENTITY_ENV = {
  GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com',
  GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], {
    cwd, encoding: 'utf8', env: { ...process.env, ...IDENTITY_ENV }, stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

export class WorkClone {
  constructor(readonly dir: string) {}

  write(file: string, content: string | Buffer): this {
    mkdirSync(path.dirname(path.join(this.dir, file)), { recursive: true });
    writeFileSync(path.join(this.dir, file), content);
    return this;
  }

  remove(file: string): this {
    unlinkSync(path.join(this.dir, file));
    return this;
  }

  /** Stages everything and commits; returns the new sha. */
  commit(message: string): string {
    git(this.dir, 'add', '-A');
    git(this.dir, 'commit', '-q', '--allow-empty', '-m', message);
    return this.sha();
  }

  sha(rev = 'HEAD'): string {
    return git(this.dir, 'rev-parse', rev);
  }

  /** Switches to `branch`, creating it from `from` (or as an orphan with no files). */
  checkout(branch: string, create?: { from?: string; orphan?: boolean }): this {
    if (create?.orphan) {
      git(this.dir, 'checkout', '-q', '--orphan', branch);
      git(this.dir, 'rm', '-rqf', '--ignore-unmatch', '.');
    } else if (create) git(this.dir, 'checkout', '-q', '-b', branch, create.from ?? 'HEAD');
    else git(this.dir, 'checkout', '-q', branch);
    return this;
  }

  /** A new branch with one commit writing `files`, pushed; returns its sha. */
  branch(name: string, files: Record<string, string | Buffer>, create: { from?: string; orphan?: boolean } = {}): string {
    this.checkout(name, create);
    for (const [file, content] of Object.entries(files)) this.write(file, content);
    const sha = this.commit(`${name} work`);
    this.push(name);
    return sha;
  }

  push(branch: string, options: { force?: boolean } = {}): this {
    git(this.dir, 'push', '-q', ...(options.force ? ['--force'] : []), 'origin', `${branch}:refs/heads/${branch}`);
    return this;
  }

  pull(branch: string): this {
    git(this.dir, 'fetch', '-q', 'origin');
    git(this.dir, 'checkout', '-q', '-B', branch, `origin/${branch}`);
    return this;
  }
}

export class HostRepo {
  readonly root: string;
  readonly hostDir: string;
  readonly cacheDir: string;
  private clones = 0;

  /** A mirror of this host in its cache dir (project id `proj-1`). */
  mirror(extra: Partial<MirrorOptions> = {}): Mirror {
    return openMirror({ cacheDir: this.cacheDir, projectId: 'proj-1', url: this.hostDir, ...extra });
  }

  constructor() {
    this.root = mkdtempSync(path.join(os.tmpdir(), 'svc-git-test-'));
    this.hostDir = path.join(this.root, 'host.git');
    this.cacheDir = path.join(this.root, 'cache');
    git(this.root, 'init', '-q', '--bare', this.hostDir);
  }

  /** A working clone of the host (empty host: a fresh repository with origin set). */
  clone(): WorkClone {
    const dir = path.join(this.root, `work-${++this.clones}`);
    git(this.root, 'clone', '-q', this.hostDir, dir);
    return new WorkClone(dir);
  }

  /** Tip of a branch on the host, or null. */
  tip(branch: string): string | null {
    try {
      return git(this.hostDir, 'rev-parse', '--verify', '-q', `refs/heads/${branch}`);
    } catch {
      return null;
    }
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A host with `main` holding a README and src/app.txt (10 lines); returns the clone. */
export function seededHost(): { host: HostRepo; work: WorkClone } {
  const host = new HostRepo();
  const work = host.clone();
  work.write('README.md', '# demo\n').write('src/app.txt', lines(1, 10)).commit('initial');
  work.push('main');
  return { host, work };
}

/** "line a\nline a+1\n...line b\n" */
export function lines(from: number, to: number, prefix = 'line'): string {
  let out = '';
  for (let i = from; i <= to; i++) out += `${prefix} ${i}\n`;
  return out;
}

/** Loose + packed object count of a bare repository. */
export function objectCount(gitDir: string): number {
  const out = git(gitDir, 'count-objects', '-v');
  const field = (name: string) => Number(/^(\S+): (\d+)$/m.exec(out.split('\n').find((l) => l.startsWith(`${name}:`)) ?? '')?.[2] ?? 0);
  return field('count') + field('in-pack');
}
