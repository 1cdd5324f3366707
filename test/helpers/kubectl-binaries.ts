// The kubectl binaries of this machine. gcloud's `kubectl` is a dispatcher: a Go program that
// starts a versioned kubectl beside it (`kubectl.1.31`, `kubectl.1.33`, ...), chosen by the
// server's version.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** kubectl on PATH, resolved; undefined without one. */
function kubectlOnPath(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return realpathSync(execFileSync('sh', ['-c', 'command -v kubectl'], { env, encoding: 'utf8' }).trim());
  } catch {
    return undefined;
  }
}

/** A kubectl's client minor version, or undefined when it cannot say. */
export function kubectlMinor(binary: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  try {
    const { clientVersion } = JSON.parse(execFileSync(binary, ['version', '--client', '-o', 'json'], { env, encoding: 'utf8' })) as { clientVersion: { minor: string } };
    return Number(clientVersion.minor.replace(/\D.*$/, ''));
  } catch {
    return undefined;
  }
}

/** The versioned kubectl a dispatcher on PATH stands for (its own client version), or undefined when `kubectl` is kubectl itself. */
export function dispatchedKubectl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const onPath = kubectlOnPath(env);
  const minor = onPath && kubectlMinor(onPath, env);
  if (!onPath || minor === undefined) return undefined;
  const versioned = path.join(path.dirname(onPath), `kubectl.1.${minor}`);
  try {
    accessSync(versioned, constants.X_OK);
    return versioned;
  } catch {
    return undefined;
  }
}

/** Every kubectl of this machine from `minMinor` on: PATH's, and the versioned ones beside it. */
export function kubectlsFrom(minMinor: number, env: NodeJS.ProcessEnv = process.env): { binary: string; minor: number }[] {
  const onPath = kubectlOnPath(env);
  if (!onPath) return [];
  const dir = path.dirname(onPath);
  const candidates = [onPath, ...readdirSync(dir).filter((f) => /^kubectl\.1\.\d+$/.test(f)).map((f) => path.join(dir, f))];
  const found = new Map<number, string>();
  for (const binary of candidates) {
    const minor = kubectlMinor(binary, env);
    if (minor !== undefined && minor >= minMinor && !found.has(minor)) found.set(minor, binary);
  }
  return [...found].sort(([a], [b]) => a - b).map(([minor, binary]) => ({ binary, minor }));
}
