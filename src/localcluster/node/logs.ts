// `kubectl logs` for the node simulator's pods: the local cluster has no kubelet to ask, so its
// `pods/log` subresource reads the files the simulator writes, one per container run
// (`<dataDir>/<first 12 hex digits of the pod uid>/logs/<container>/<restart count>.log`).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { KObject } from '../status.js';

export interface PodLogQuery {
  /** Default: the pod's only (first) container. */
  container?: string;
  /** The container's previous run instead of its current one. */
  previous?: boolean;
  /** Only the last lines. */
  tailLines?: number;
}

/** The directory of a pod's files on this node. */
export function podDir(dataDir: string, uid: string): string {
  return path.join(dataDir, uid.replace(/-/g, '').slice(0, 12));
}

/** Reads a pod's container log as the kubelet would answer it; undefined when that run left none. */
export function podLogReader(dataDir: string): (pod: KObject, query: PodLogQuery) => Promise<string | undefined> {
  return async (pod, query) => {
    const uid = pod.metadata?.uid;
    const containers = (pod.spec as { containers?: { name: string }[] } | undefined)?.containers ?? [];
    const container = query.container ?? containers[0]?.name;
    if (!uid || !container) return undefined;
    const dir = path.join(podDir(dataDir, uid), 'logs', container);
    const runs = (await readdir(dir).catch(() => [] as string[]))
      .map((f) => /^(\d+)\.log$/.exec(f)?.[1]).filter((n): n is string => n !== undefined).map(Number).sort((a, b) => a - b);
    const run = runs.at(query.previous ? -2 : -1);
    if (run === undefined) return undefined;
    const text = await readFile(path.join(dir, `${run}.log`), 'utf8').catch(() => undefined);
    if (text === undefined || query.tailLines === undefined) return text;
    const lines = text.split('\n');
    const last = lines.at(-1) === '' ? lines.slice(0, -1) : lines;
    return last.slice(-query.tailLines).map((l) => `${l}\n`).join('');
  };
}
