// images/svc/Dockerfile without a Docker engine: its stages, user and entrypoint, a few hadolint
// rules, and that the chart, `make image` and the Dockerfile agree (name, tag, user, entrypoint).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CHART_DIR, REPO_ROOT, helm } from '../chart/helm.js';

interface Instruction { op: string; args: string; line: number }
interface Stage { from: string; name: string | null; instructions: Instruction[] }

/** Instructions (continuations joined, comments dropped) grouped by stage. */
function parseDockerfile(text: string): { args: Instruction[]; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) return;
    if (!pending) start = i + 1;
    pending += `${line.replace(/\\$/, '').trim()} `;
    if (line.endsWith('\\')) return;
    const m = /^(\w+)\s+(.*)$/.exec(pending.trim())!;
    instructions.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim(), line: start });
    pending = '';
  });
  const args: Instruction[] = [];
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!;
      stages.push({ from: m[1]!, name: m[2] ?? null, instructions: [] });
    } else if (stages.length === 0) args.push(ins);
    else stages.at(-1)!.instructions.push(ins);
  }
  return { args, stages };
}

const DOCKERFILE = path.join(REPO_ROOT, 'images/svc/Dockerfile');
const { args, stages } = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
const runtime = stages.at(-1)!;
const all = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op);
const nodeImage = /^NODE_IMAGE=(\S+)$/.exec(args.find((a) => a.op === 'ARG')?.args ?? '')?.[1];

let home: string | undefined;
afterAll(() => { if (home) rmSync(home, { recursive: true, force: true }); });

describe('images/svc/Dockerfile', () => {
  it('is multi-stage: build (all dependencies), prod-deps (pruned), runtime on a slim Node 20', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'prod-deps', 'runtime']);
    expect(nodeImage).toMatch(/^node:20-[a-z]+-slim$/);
    expect(stages[0]!.from).toBe('${NODE_IMAGE}');
    expect(runtime.from).toBe('${NODE_IMAGE}');
    expect(all(stages[0]!, 'RUN').map((r) => r.args).join('\n')).toMatch(/npm install[\s\S]*tsc -p tsconfig.build.json/);
    // the API serves the dashboard from dist/web: the image must build it
    expect(all(stages[0]!, 'RUN').map((r) => r.args).join('\n')).toContain('node web/build.mjs');
    // the API and the operator start from their bundles (src/main/entry.ts), built after tsc
    expect(all(stages[0]!, 'RUN').map((r) => r.args).join('\n')).toMatch(/tsc -p tsconfig.build.json[\s\S]*node src\/main\/bundle.mjs/);
    expect(stages[1]!.from).toBe('build');
    expect(all(stages[1]!, 'RUN')[0]!.args).toMatch(/npm prune --omit=dev/);
  });

  it('runtime: git and tini installed the hadolint way, production node_modules only, every COPY source exists', () => {
    const apt = all(runtime, 'RUN').map((r) => r.args).find((a) => a.includes('apt-get install'))!;
    expect(apt).toMatch(/apt-get install -y --no-install-recommends .*\bgit\b/);
    expect(apt).toMatch(/\btini\b/);
    expect(apt).toContain('rm -rf /var/lib/apt/lists/*');
    const copies = all(runtime, 'COPY').map((c) => c.args);
    expect(copies).toContain('--from=prod-deps /src/node_modules ./node_modules');
    expect(copies.filter((c) => c.includes('node_modules'))).toHaveLength(1);
    for (const stage of stages) {
      for (const copy of all(stage, 'COPY').filter((c) => !c.args.startsWith('--from'))) {
        for (const source of copy.args.split(/\s+/).slice(0, -1)) expect(existsSync(path.join(REPO_ROOT, source)), `COPY ${source}`).toBe(true);
      }
    }
    const ignored = readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']));
  });

  it('runs as a numeric non-root user with tini as process 1', () => {
    const users = all(runtime, 'USER');
    expect(users).toHaveLength(1);
    expect(users[0]!.args).toMatch(/^[1-9]\d*:\d+$/);
    expect(JSON.parse(all(runtime, 'ENTRYPOINT')[0]!.args)).toEqual(['/usr/bin/tini', '--']);
    expect(JSON.parse(all(runtime, 'CMD')[0]!.args)).toEqual(['node', 'dist/src/main/api.js']);
    // hadolint DL3002 / DL3007 / DL3000: not root at the end, no :latest, absolute WORKDIR
    expect(users[0]!.args.startsWith('0')).toBe(false);
    expect(stages.every((s) => !s.from.endsWith(':latest'))).toBe(true);
    expect(all(runtime, 'WORKDIR').every((w) => w.args.startsWith('/'))).toBe(true);
  });

  it('agrees with the chart (image name and tag, user, args that keep the entrypoint) and with make image', () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'svc-image-'));
    const rendered = helm(['template', 'rel', CHART_DIR, '--namespace', 'svc-system'], home);
    expect(rendered.status).toBe(0);
    const deployments = parseAllDocuments(rendered.stdout).map((d) => d.toJS()).filter((m) => m?.kind === 'Deployment');
    expect(deployments).toHaveLength(2);
    const version = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const make = execFileSync('make', ['-n', 'image'], { cwd: REPO_ROOT, encoding: 'utf8' });
    const built = /docker build -f images\/svc\/Dockerfile -t (\S+) \./.exec(make)?.[1];
    expect(built).toBe(`${(parse(readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as { image: { repository: string } }).image.repository}:${version}`);
    const uid = Number(all(runtime, 'USER')[0]!.args.split(':')[0]);
    for (const d of deployments) {
      const container = d.spec.template.spec.containers[0];
      expect(container.image).toBe(built);
      expect(container.command).toBeUndefined(); // a command would replace tini
      expect(container.args).toEqual(['node', `dist/src/main/${d.metadata.name.replace(/^rel-svc-/, '')}.js`]);
      expect(container.securityContext.runAsUser).toBe(uid);
      expect(existsSync(path.join(REPO_ROOT, 'src/main', `${d.metadata.name.replace(/^rel-svc-/, '')}.ts`))).toBe(true);
    }
  });
});
