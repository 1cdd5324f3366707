// What `svc dev` checks before it starts anything: the tools its sessions need on this machine.
// Each check answers null (present) or lines saying what is missing and how to get it; every
// line is printed at once, so a new machine learns all it lacks from one run: the sandbox
// isolation tools too, although svc dev starts without them (its sessions then refuse to start).
import { splitWords } from '../../daemon/words.js';
import { ENGINE_NAME, ENGINE_PACKAGE, findExecutable, pinnedEngineBinary } from '../lib/engine-path.js';
import { checkIsolation, type IsolationReport } from '../lib/jail/check.js';

export interface PreflightCheck {
  /** What is checked (for messages and tests), e.g. `git`. */
  name: string;
  /** null when the piece is there; else one line per missing piece: what is missing and how to get it. */
  run(): string | string[] | null | Promise<string | string[] | null>;
  /**
   * svc dev starts without it (and says so itself once running); when something it cannot start
   * without is missing, this one's lines are listed with the others all the same.
   */
  advisory?: boolean;
}

/** Thrown by runPreflight: one line per missing piece. */
export class PreflightError extends Error {
  constructor(readonly problems: string[]) {
    super(`this machine lacks what svc dev needs:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'PreflightError';
  }
}

/** Runs every check svc dev cannot start without; when one fails, the advisory ones too, and throws PreflightError listing all that failed. */
export async function runPreflight(checks: readonly PreflightCheck[]): Promise<void> {
  const problemsOf = async (list: readonly PreflightCheck[]) => {
    const problems: string[] = [];
    for (const check of list) problems.push(...[await check.run()].flat().filter((p): p is string => !!p));
    return problems;
  };
  const fatal = await problemsOf(checks.filter((c) => !c.advisory));
  if (fatal.length > 0) throw new PreflightError([...fatal, ...await problemsOf(checks.filter((c) => c.advisory))]);
}

export interface PreflightEnvironment {
  /** The PATH programs are looked up on (default: this process's). */
  searchPath?: string;
  /** The pinned engine binary (default: the installed opencode-ai package's). */
  pinnedEngine?: () => string | null;
  /** Whether sandboxes can be isolated here (default: checkIsolation). */
  isolation?: () => Promise<IsolationReport>;
}

/** git: the mirrors, the git gateway and every sandbox's workspace run it. */
export function gitCheck(env: PreflightEnvironment = {}): PreflightCheck {
  return {
    name: 'git',
    run: () => (findExecutable('git', env.searchPath) ? null
      : 'git: not found on PATH; install it (Debian/Ubuntu: apt-get install git; Fedora: dnf install git; macOS: xcode-select --install)'),
  };
}

/**
 * The engine svc-agent starts in every sandbox: the pinned opencode (from the opencode-ai
 * package, else an `opencode` on PATH as in the sandbox image), or the program of
 * `--engine-command`.
 */
export function engineCheck(engineCommand: string | undefined, env: PreflightEnvironment = {}): PreflightCheck {
  return {
    name: 'engine',
    run: () => {
      let program = ENGINE_NAME;
      if (engineCommand !== undefined) {
        try {
          program = splitWords(engineCommand)[0] ?? '';
        } catch (error) {
          return `the engine: --engine-command ${JSON.stringify(engineCommand)} cannot be split into words (${(error as Error).message}); fix its quoting`;
        }
        if (!program) return 'the engine: --engine-command is empty; give a command, or leave it out for the pinned opencode';
      }
      if (program === ENGINE_NAME) {
        if ((env.pinnedEngine ?? pinnedEngineBinary)() || findExecutable(ENGINE_NAME, env.searchPath)) return null;
        return `the engine: opencode is not installed (the ${ENGINE_PACKAGE} package, pinned in package.json, is missing from node_modules); run \`make install\` (npm install) in the svc checkout`;
      }
      if (findExecutable(program, env.searchPath)) return null;
      return `the engine: ${JSON.stringify(program)} of --engine-command is not ${program.includes('/') ? 'an executable file' : 'on PATH'}; install it or fix --engine-command`;
    },
  };
}

/** Sandbox isolation (bubblewrap, iproute2, nftables, root): svc dev starts without it, its sessions do not. */
export function isolationCheck(env: PreflightEnvironment = {}): PreflightCheck {
  return {
    name: 'isolation',
    advisory: true,
    run: async () => {
      const report = await (env.isolation ?? checkIsolation)();
      return report.ok ? null : report.problems.map((problem) => `sandbox isolation: ${problem} (without it sessions refuse to start; --unsafe-no-isolation runs them unisolated, which is unsafe)`);
    },
  };
}

/** The checks of `svc dev` (isolation's unless --unsafe-no-isolation). */
export function devPreflightChecks(options: { engineCommand?: string; unsafeNoIsolation?: boolean } & PreflightEnvironment = {}): PreflightCheck[] {
  return [gitCheck(options), engineCheck(options.engineCommand, options), ...(options.unsafeNoIsolation ? [] : [isolationCheck(options)])];
}
