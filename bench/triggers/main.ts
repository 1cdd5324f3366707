// bench/triggers (issue 24 §3): throughput that stays flat as history grows.
// (1) 10,000 signed webhook deliveries (each its own X-GitHub-Delivery id) at a fixed 50/s, open
// loop, against one API process as the chart runs it (dist/src/main/api.js), with the local
// cluster (dist/src/localcluster/main.js) and an operator (bench/triggers/operator.ts: the Trigger
// controller with retention at its default of 100 fires, the TriggerFire controller, and a
// stand-in that ends each Session at once) in their own processes. p50 and p99 of the first and
// the last 1,000 deliveries, next to two probes at 5/s running in the same windows of the same
// run: a bare express handler (its own process) and the TriggerFire create alone (this process's
// kube client straight to the API server, a namespace nobody watches). (2) The TriggerFire
// controller's sustained rate: 2,000 fires created at once, time until all are fired.
// Run: make build && npx tsx bench/triggers/main.ts (BENCH_TRIGGERS_DELIVERIES: default 10000;
// BENCH_PROF=DIR writes CPU profiles of the API and the operator there).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Informer, KubeClient, loadClusterConfig } from '../../src/kube/index.js';
import { adminKubeconfig } from '../../src/localcluster/index.js';
import {
  API_VERSION, DELIVERY_LEDGER, FIRE_ANSWER_ANNOTATION, NAMESPACE, PROJECT, SECRET, SESSION, TRIGGER, TRIGGER_FIRE, controllerReference, deliveryFireName, isPendingFire, newTriggerFire,
  type ConfigMapObject, type KubeObject, type Project, type Trigger, type TriggerFire,
} from '../../src/resources/index.js';
import { signWebhookBody } from '../../src/triggers/index.js';
import { median, percentile, writeSection } from '../lib/report.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-triggers-'));
const DELIVERIES = Number(process.env.BENCH_TRIGGERS_DELIVERIES ?? 10_000);
const RATE = 50; // deliveries per second
const WINDOW = Math.min(1000, Math.floor(DELIVERIES / 2)); // the first and the last WINDOW deliveries
const PROBE_RATE = 5; // each probe, per second
const BURST = 2000; // fires created at once for the controller's rate
const SECRET_VALUE = 'bench-webhook-secret';
const NS = 'hooks';
const children: ChildProcess[] = [];

function child(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ process: ChildProcess; match: RegExpExecArray }> {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let out = '';
  return new Promise((resolve, reject) => {
    const check = (c: Buffer) => {
      out = (out + c.toString()).slice(-20_000);
      const m = ready.exec(out);
      if (m) resolve({ process: proc, match: m });
    };
    proc.stdout!.on('data', check);
    proc.stderr!.on('data', check);
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}:\n${out}`)));
  });
}

const BARE = `import express from 'express';
const app = express();
app.post('/hook', express.raw({ type: () => true, limit: '1mb' }), (req, res) => { res.status(202).json({ status: 'fired', session_id: String(req.body.length) }); });
const server = app.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));`;

interface Sample { at: number; ms: number; ok: boolean }

/** Open loop: `count` calls of `send(i)`, one every 1000/rate ms from `start`, each timed from its due instant. */
async function openLoop(count: number, rate: number, send: (i: number) => Promise<boolean>, start = performance.now()): Promise<Sample[]> {
  const samples: Sample[] = new Array(count);
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(send(i).then((ok) => ok, () => false).then((ok) => { samples[i] = { at: due - start, ms: performance.now() - due, ok }; }));
  }
  await Promise.all(inflight);
  return samples;
}

const pct = (samples: Sample[], p: number) => percentile(samples.filter((s) => s.ok).map((s) => s.ms), p);
const ms = (v: number) => `${v.toFixed(1)} ms`;
const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(0)}`;

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function main(): Promise<void> {
  const clusterDir = path.join(tmp, 'cluster');
  const cluster = await child([path.join(ROOT, 'dist/src/localcluster/main.js'), '--data-dir', clusterDir], {}, /(https:\/\/127\.0\.0\.1:\d+)/);
  const kubeconfig = path.join(tmp, 'kubeconfig');
  const access = { url: cluster.match[1]!, token: readFileSync(path.join(clusterDir, 'admin-token'), 'utf8').trim(), ca: readFileSync(path.join(clusterDir, 'serving.crt'), 'utf8') };
  writeFileSync(kubeconfig, adminKubeconfig(access), { mode: 0o600 });
  await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', path.join(ROOT, 'crds')]);
  const client = new KubeClient(loadClusterConfig({ file: kubeconfig }), 'bench');
  // a cap nobody reaches: every fire starts a session (the stand-in ends it)
  await client.resource(NAMESPACE).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, annotations: { 'svc.dev/max-concurrent-sessions': '1000000' } } });
  await client.resource(NAMESPACE).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'probe' } });
  const project = await client.resource<Project>(PROJECT).create({ apiVersion: API_VERSION, kind: PROJECT.kind, metadata: { name: 'bench', namespace: NS }, spec: { repoUrl: '/nowhere', defaultBranch: 'main' } });
  const trigger = await client.resource<Trigger>(TRIGGER).create({
    apiVersion: API_VERSION, kind: TRIGGER.kind,
    metadata: { name: 'bench-push', namespace: NS, labels: { 'svc.dev/project': 'bench' }, ownerReferences: [controllerReference(project)] },
    spec: { slug: 'push', type: 'webhook', prompt: 'push {{ body.ref }}', name: 'push', agent: 'default', sessionMode: 'fresh', enabled: true, timezone: 'UTC', secretEnv: 'HOOK', projectRef: { name: 'bench' } },
  });
  await client.resource<KubeObject>(SECRET).create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bench-secrets', namespace: NS }, data: { HOOK: Buffer.from(SECRET_VALUE).toString('base64') } });

  const operator = await child([...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}/operator`] : []), '--import', 'tsx', path.join(ROOT, 'bench/triggers/operator.ts')], { KUBECONFIG: kubeconfig, BENCH_NAMESPACE: NS }, /bench operator: leading/);
  const prof = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
  const api = await child([...prof, path.join(ROOT, 'dist/src/main/api.js')], {
    KUBECONFIG: kubeconfig, SVC_NAMESPACE: NS, SVC_PROJECT_NAMESPACE: NS, SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1',
    SVC_TRIGGER_QUEUE_DEPTH: '1000000', SVC_MIRROR_DIR: path.join(tmp, 'api-mirrors'),
  }, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const apiUrl = api.match[1]!;
  for (;;) { if ((await fetch(`${apiUrl}/readyz`)).ok) break; await new Promise((r) => setTimeout(r, 100)); }
  const bare = await child(['--input-type=module', '-e', BARE], {}, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const bareUrl = `${bare.match[1]}/hook`;

  const payload = JSON.stringify({ ref: 'refs/heads/main', before: '0'.repeat(40), after: 'f'.repeat(40), repository: { full_name: 'acme/web' }, commits: Array.from({ length: 5 }, (_, i) => ({ id: String(i).repeat(40), message: `commit ${i}`, author: { name: 'dev', email: 'dev@example.com' } })) });
  const headers = { 'content-type': 'application/json', 'x-hub-signature-256': signWebhookBody(payload, SECRET_VALUE), 'user-agent': 'bench' };
  const hookUrl = `${apiUrl}/v1/webhooks/projects/${project.metadata.uid}/push`;
  const deliver = async (id: string) => {
    const res = await fetch(hookUrl, { method: 'POST', headers: { ...headers, 'x-github-delivery': id }, body: payload });
    await res.arrayBuffer();
    return res.status === 202;
  };
  const bareCall = async () => {
    const res = await fetch(bareUrl, { method: 'POST', headers, body: payload });
    await res.arrayBuffer();
    return res.status === 202;
  };
  // the one write the receiver makes, alone: a TriggerFire of the same size through the same kube client, where nobody watches
  const fires = client.resource<TriggerFire>(TRIGGER_FIRE);
  const directFire = (name: string, namespace = NS) => {
    const sessionName = randomUUID();
    const fire = newTriggerFire(trigger, { name, source: 'webhook', firedAt: new Date(), variables: { body: JSON.parse(payload) as unknown }, sessionName, deliveryId: name });
    // in the unwatched namespace: no owner (an owner lives in its own namespace), nothing else differs
    const metadata = namespace === NS ? fire.metadata : { name, namespace };
    return { ...fire, metadata: { ...metadata, annotations: { [FIRE_ANSWER_ANNOTATION]: JSON.stringify({ status: 'fired', session_id: sessionName }) } } };
  };
  const createAlone = async (i: number) => { await fires.create(directFire(`probe-${i}`, 'probe')); return true; };

  // what the operator has to do: pending fires of the namespace, seen by this process's watch
  const watched = new Informer<TriggerFire>(client, TRIGGER_FIRE, { namespace: NS });
  await watched.start();
  const pending = () => watched.list(NS).filter(isPendingFire).length;

  // warm-up (not counted): JIT, connections, caches
  await openLoop(200, RATE, (i) => deliver(`warm-${i}`));
  await openLoop(50, RATE, () => bareCall());
  await openLoop(50, RATE, (i) => createAlone(1_000_000 + i));

  // (1) the deliveries, with both probes in the same seconds
  const cpu0 = { api: cpuSeconds(api.process.pid!), operator: cpuSeconds(operator.process.pid!), cluster: cpuSeconds(cluster.process.pid!) };
  const rss0 = { api: rssMiB(api.process.pid!), operator: rssMiB(operator.process.pid!) };
  const backlog: number[] = [];
  const sampler = setInterval(() => backlog.push(pending()), 1000);
  const start = performance.now() + 50;
  const seconds = DELIVERIES / RATE;
  const [svc, bareRun, createRun] = await Promise.all([
    openLoop(DELIVERIES, RATE, (i) => deliver(`bench-${i}`), start),
    openLoop(seconds * PROBE_RATE, PROBE_RATE, () => bareCall(), start + 37),
    openLoop(seconds * PROBE_RATE, PROBE_RATE, (i) => createAlone(i), start + 113),
  ]);
  const webhookWall = (performance.now() - start) / 1000;
  clearInterval(sampler);
  const drainStart = performance.now();
  while (pending() > 0 && performance.now() - drainStart < 120_000) await new Promise((r) => setTimeout(r, 200));
  const drainMs = performance.now() - drainStart;
  const cpu1 = { api: cpuSeconds(api.process.pid!), operator: cpuSeconds(operator.process.pid!), cluster: cpuSeconds(cluster.process.pid!) };
  const rss1 = { api: rssMiB(api.process.pid!), operator: rssMiB(operator.process.pid!) };
  // let retention settle, then count what is kept
  await new Promise((r) => setTimeout(r, 5000));
  const triggerFires = (await fires.list(NS, { labelSelector: 'svc.dev/trigger=bench-push' })).items;
  const pages = (await client.resource<ConfigMapObject>(DELIVERY_LEDGER).list(NS, { labelSelector: DELIVERY_LEDGER.labelSelector })).items;
  const ledgerEntries = pages.reduce((n, p) => n + Object.keys(p.data ?? {}).length, 0);
  const sessionCount = (await client.resource(SESSION).list(NS)).items.length;
  // a redelivery of the first delivery (pruned long ago) gets its first answer and creates nothing
  const redelivery = await fetch(hookUrl, { method: 'POST', headers: { ...headers, 'x-github-delivery': 'bench-0' }, body: payload });
  const redeliveryBody = await redelivery.text();
  const firstFirePruned = !triggerFires.some((f) => f.metadata.name === deliveryFireName('bench-push', 'bench-0'));

  // (2) the TriggerFire controller's sustained rate: BURST fires at once
  const firedAt = new Map<string, number>();
  watched.on('update', (f) => { if (f.status?.phase === 'fired' && f.metadata.name?.startsWith('burst-') && !firedAt.has(f.metadata.name)) firedAt.set(f.metadata.name, performance.now()); });
  const burstStart = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < BURST) {
      const i = next++;
      await fires.create(directFire(`burst-${i}`));
    }
  }));
  const burstCreated = performance.now();
  while (firedAt.size < BURST && performance.now() - burstStart < 600_000) await new Promise((r) => setTimeout(r, 100));
  const burstDone = Math.max(...firedAt.values());
  const controllerRate = firedAt.size / ((burstDone - burstStart) / 1000);
  const arrivalRate = BURST / ((burstCreated - burstStart) / 1000);

  await watched.stop();
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  rmSync(tmp, { recursive: true, force: true });

  const first = svc.slice(0, WINDOW);
  const last = svc.slice(-WINDOW);
  const windowMs = (WINDOW * 1000) / RATE;
  const lastFrom = ((DELIVERIES - WINDOW) * 1000) / RATE;
  const inFirst = (s: Sample[]) => s.filter((x) => x.at < windowMs);
  const inLast = (s: Sample[]) => s.filter((x) => x.at >= lastFrom);
  const errors = svc.filter((s) => !s.ok).length;
  const within = (a: number, b: number) => Math.abs(b - a) / a <= 0.2;
  const flatP50 = within(pct(first, 50), pct(last, 50));
  const flatP99 = within(pct(first, 99), pct(last, 99));
  const target = (s: Sample[], c: Sample[]) => pct(s, 50) <= pct(c, 50) + 5;
  const row = (name: string, a: Sample[], b: Sample[]) => `| ${name} | ${ms(pct(a, 50))} | ${ms(pct(a, 99))} | ${ms(pct(b, 50))} | ${ms(pct(b, 99))} |`;
  // every 1,000 deliveries: the receiver and the probes of the same seconds (the machine's load moves all three)
  const BLOCK = 1000;
  const blockMs = (BLOCK * 1000) / RATE;
  const blocks = Array.from({ length: Math.ceil(DELIVERIES / BLOCK) }, (_, b) => {
    const during = (x: Sample[]) => x.filter((y) => y.at >= b * blockMs && y.at < (b + 1) * blockMs);
    const mine = svc.slice(b * BLOCK, (b + 1) * BLOCK);
    return `| ${(b * BLOCK + 1).toLocaleString('en')}-${Math.min(DELIVERIES, (b + 1) * BLOCK).toLocaleString('en')} | ${ms(pct(mine, 50))} | ${ms(pct(mine, 99))} | ${ms(pct(during(createRun), 50))} | ${ms(pct(during(bareRun), 50))} | ${ms(pct(mine, 50) - pct(during(createRun), 50))} |`;
  });
  const load1 = os.loadavg()[0]!;
  const markdown = `## triggers: webhook receipt as history grows, the TriggerFire controller's rate

**${DELIVERIES.toLocaleString('en')} webhook deliveries at a fixed ${RATE}/s** (open loop: each timed from its due instant, so a
backlog shows), every one signed (X-Hub-Signature-256, a 5-commit push payload) with its own X-GitHub-Delivery id,
against one API process as the chart runs it (\`dist/src/main/api.js\`) with the local cluster and an operator in their own
processes (bench/triggers/operator.ts: the Trigger controller, which prunes to the default 100 finished fires per trigger and
records pruned delivery ids in the ledger, and the TriggerFire controller, 32 workers; a stand-in for the Session controller
ends each session at once, so that every fire finishes, its Session stays, and no git or sandbox work competes). Each
delivery starts a session (cap not reached). The two probes run at ${PROBE_RATE}/s each in the same seconds: a bare express handler
(\`express.raw\`, answers 202, its own process) and the TriggerFire create alone (the same object through the same kube
client as the API, straight to the API server, in a namespace nobody watches).

| | first ${WINDOW.toLocaleString('en')}: p50 | p99 | last ${WINDOW.toLocaleString('en')}: p50 | p99 |
|---|---|---|---|---|
${row('svc webhook receiver (202 once the fire is stored)', first, last)}
${row('probe: the TriggerFire create alone', inFirst(createRun), inLast(createRun))}
${row('probe: bare express handler', inFirst(bareRun), inLast(bareRun))}

Every ${BLOCK.toLocaleString('en')} deliveries, with the probes of the same seconds:

| deliveries | svc p50 | svc p99 | create alone p50 | bare p50 | svc − create alone, p50 |
|---|---|---|---|---|---|
${blocks.join('\n')}

- Flat: p50 of the last ${WINDOW.toLocaleString('en')} within 20 % of the first: **${flatP50 ? 'met' : 'not met'}** (${signed(((pct(last, 50) / pct(first, 50)) - 1) * 100)} %); p99: **${flatP99 ? 'met' : 'not met'}** (${signed(((pct(last, 99) / pct(first, 99)) - 1) * 100)} %).
  The probes' p99 in the same windows, which no history reaches (the bare handler is a process of its own): create alone ${signed(((pct(inLast(createRun), 99) / pct(inFirst(createRun), 99)) - 1) * 100)} %, bare handler ${signed(((pct(inLast(bareRun), 99) / pct(inFirst(bareRun), 99)) - 1) * 100)} %.
  What the receiver adds to the create alone at p50, which the machine's load moves much less: ${ms(pct(first, 50) - pct(inFirst(createRun), 50))} in the first window, ${ms(pct(last, 50) - pct(inLast(createRun), 50))} in the last.
- p50 ≤ the create alone + 5 ms: first window **${target(first, inFirst(createRun)) ? 'met' : 'not met'}** (${ms(pct(first, 50) - pct(inFirst(createRun), 50))} over it), last window **${target(last, inLast(createRun)) ? 'met' : 'not met'}** (${ms(pct(last, 50) - pct(inLast(createRun), 50))} over it).
- All ${DELIVERIES.toLocaleString('en')}: p50 ${ms(pct(svc, 50))}, p99 ${ms(pct(svc, 99))}, ${errors} errors, sent over ${webhookWall.toFixed(0)} s.
- Kept after the run: ${triggerFires.length} TriggerFires of the trigger (of ${(DELIVERIES + 200).toLocaleString('en')} made), ${ledgerEntries.toLocaleString('en')} pruned delivery ids in ${pages.length} ledger pages, ${sessionCount.toLocaleString('en')} Sessions (they stay).
  A redelivery of the first delivery (its fire ${firstFirePruned ? 'pruned' : 'still there'}): ${redelivery.status} \`${redeliveryBody}\`.
- The operator kept up with ${RATE}/s: **${median(backlog) <= RATE ? 'yes' : 'no'}** (median backlog at most one second of arrivals): fires not fired yet, sampled each second: median ${median(backlog)}, max ${Math.max(...backlog)}; drained ${(drainMs / 1000).toFixed(1)} s after the last delivery.
- CPU over the run: API ${(((cpu1.api - cpu0.api) / webhookWall) * 100).toFixed(0)} % of a core, operator ${(((cpu1.operator - cpu0.operator) / webhookWall) * 100).toFixed(0)} %, local cluster ${(((cpu1.cluster - cpu0.cluster) / webhookWall) * 100).toFixed(0)} %; RSS API ${rss0.api.toFixed(0)} → ${rss1.api.toFixed(0)} MiB, operator ${rss0.operator.toFixed(0)} → ${rss1.operator.toFixed(0)} MiB.

**The TriggerFire controller's sustained rate**: ${BURST.toLocaleString('en')} fires created at once (16 writers, ${arrivalRate.toFixed(0)}/s arriving), each starting a
session: all fired ${((burstDone - burstStart) / 1000).toFixed(1)} s after the first create: **${controllerRate.toFixed(1)} fires/s** (target ≥ 20: **${controllerRate >= 20 ? 'met' : 'not met'}**).

Load average at the end: ${load1.toFixed(1)} on ${os.cpus().length} cores (the machine is shared with other work); absolute times move with it,
the first/last ratio and the distance to the create alone are what to read. Cron lateness with 1,000 triggers armed is
bench/cron's section below.`;
  console.log(markdown);
  writeSection('triggers', markdown);
}

main().catch((error: unknown) => {
  console.error(error);
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
});
