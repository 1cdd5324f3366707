// Where a process's main thread spent its time, from a V8 CPU profile (node --cpu-prof): busy time
// (samples that are not idle), and the share of it spent inside given functions (inclusive: the
// function or anything it called synchronously; asynchronous continuations count where they run).
import { readFileSync } from 'node:fs';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

export interface ProfileSummary {
  /** Seconds sampled, and of them busy (not idle). */
  seconds: number;
  busySeconds: number;
  /** Share of the busy time (0..1) inside each named function (matched by name and file). */
  inside: Record<string, number>;
  /** The functions with the most self time: name (file), share of the busy time. */
  top: { frame: string; share: number }[];
}

/** `functions`: label -> [function name, a substring of its file URL]. */
export function summarizeProfile(file: string, functions: Record<string, [string, string]>, topCount = 8): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const frame = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} (${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '').replace(/^file:\/\//, '') || 'native'})`;
  let idle = 0;
  const selfByFrame = new Map<string, number>();
  const inside: Record<string, number> = Object.fromEntries(Object.keys(functions).map((k) => [k, 0]));
  for (const [id, t] of self) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') { idle += t; continue; }
    selfByFrame.set(frame(node), (selfByFrame.get(frame(node)) ?? 0) + t);
    const matched = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url } = byId.get(cur)!.callFrame;
      for (const [label, [name, file]] of Object.entries(functions)) {
        if (!matched.has(label) && functionName === name && url.includes(file)) {
          matched.add(label);
          inside[label]! += t;
        }
      }
    }
  }
  const busy = total - idle;
  return {
    seconds: total / 1e6,
    busySeconds: busy / 1e6,
    inside: Object.fromEntries(Object.entries(inside).map(([k, v]) => [k, busy > 0 ? v / busy : 0])),
    top: [...selfByFrame].sort((a, b) => b[1] - a[1]).slice(0, topCount).map(([f, t]) => ({ frame: f, share: busy > 0 ? t / busy : 0 })),
  };
}
