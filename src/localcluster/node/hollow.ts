// Hollow sandboxes (as kubemark has hollow nodes): a Pod the node simulator plays without any
// process. Its "daemon" is a minimal in-process responder speaking svc-agent's contract
// (docs/daemon.md): GET /svc/health with the engine ready, a root_session_id and idle/busy,
// prompts (POST /session/:id/prompt_async -> 204) and aborts, with svc-agent's authentication
// (the x-svc-user-context header signed with the pod's SVC_SANDBOX_TOKEN, or that token as a
// bearer on the control routes). One http.Server answers every hollow pod: each pod only adds a
// listening socket on its own address and port (the Pod's status address, as a real daemon
// listens), and requests are told apart by the address they arrived on. So one machine holds
// thousands. README.md says how a Pod is made hollow.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import { CONTEXT_HEADER, NonceCache, verifyContextHeader, type ContextTarget } from '../../lib/context-header.js';
import type { KObject } from '../status.js';
import type { NodeApi } from './api.js';
import { ContainerConfigError, resolveEnv, type Container } from './container.js';
import { podStatus, type ContainerView, type PodCondition } from './status.js';

/** Annotation that makes a Pod hollow ("true"). */
export const HOLLOW_ANNOTATION = 'sim.svc.dev/hollow';
/** Milliseconds from start until the hollow engine is ready (default 0). */
export const HOLLOW_BOOT_ANNOTATION = 'sim.svc.dev/hollow-boot-ms';
/** Milliseconds a prompt keeps the hollow engine busy (default 100). */
export const HOLLOW_BUSY_ANNOTATION = 'sim.svc.dev/hollow-busy-ms';
/** An image whose repository is named so (any registry, tag or digest) is played hollow too. */
export const HOLLOW_IMAGE_NAME = 'svc-hollow-sandbox';
/** The daemon port when the container declares none (svc-agent's SVC_SERVICE_PORT). */
export const DEFAULT_HOLLOW_PORT = 8000;

export function isHollowImage(ref: string | undefined): boolean {
  if (!ref) return false;
  const repository = ref.replace(/@.*$/, '').replace(/:[^/:]+$/, '');
  return repository === HOLLOW_IMAGE_NAME || repository.endsWith(`/${HOLLOW_IMAGE_NAME}`);
}

export function isHollowPod(pod: KObject): boolean {
  if (pod.metadata?.annotations?.[HOLLOW_ANNOTATION] === 'true') return true;
  const containers = (pod.spec as { containers?: Container[] } | undefined)?.containers ?? [];
  return containers.some((c) => isHollowImage(c.image));
}

function annotationMs(pod: KObject, name: string, fallback: number): number {
  const raw = pod.metadata?.annotations?.[name];
  const value = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** The addresses hollow pods listen on: 127.<base>.x.y, handed out in order, freed ones reused first. */
export class HollowAddresses {
  private next = 0;
  private readonly freed: string[] = [];
  constructor(private readonly secondOctet: number) {}

  /** Candidates in order; `size` bounds the search (65,024 addresses per second octet). */
  *candidates(): Generator<string> {
    while (this.freed.length) yield this.freed.shift()!;
    while (this.next < 255 * 255) {
      const n = this.next++;
      yield `127.${this.secondOctet}.${Math.floor(n / 255)}.${(n % 255) + 1}`;
    }
  }

  release(ip: string): void {
    this.freed.push(ip);
  }
}

type Listener = { server: net.Server; sockets: Set<net.Socket> };

/** The one HTTP server behind every hollow pod's listening sockets. */
export class HollowHost {
  private readonly http: http.Server;
  private readonly daemons = new Map<string, HollowDaemon>();

  constructor() {
    this.http = http.createServer((req, res) => {
      const daemon = this.daemons.get(`${req.socket.localAddress}:${req.socket.localPort}`);
      if (!daemon) { res.writeHead(503).end(); return; }
      daemon.handle(req, res).catch(() => { if (!res.headersSent) res.writeHead(500); res.end(); });
    });
    this.http.keepAliveTimeout = 65_000;
  }

  /** Listens on ip:port for `daemon`; rejects with EADDRINUSE when something else has it. */
  async listen(ip: string, port: number, daemon: HollowDaemon): Promise<Listener> {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      this.http.emit('connection', socket);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, ip, () => { server.off('error', reject); resolve(); });
    });
    this.daemons.set(`${ip}:${port}`, daemon);
    return { server, sockets };
  }

  async unlisten(ip: string, port: number, listener: Listener): Promise<void> {
    this.daemons.delete(`${ip}:${port}`);
    const closed = new Promise<void>((resolve) => listener.server.close(() => resolve()));
    for (const socket of listener.sockets) socket.destroy();
    await closed;
  }
}

interface HollowContext {
  api: NodeApi;
  hostIP: string;
  host: HollowHost;
  addresses: HollowAddresses;
  log: (line: string) => void;
}

/** svc-agent's routes, answered from memory. */
export class HollowDaemon {
  readonly startedAt = new Date().toISOString();
  engineReady = false;
  readonly rootSessionId: string;
  private run: 'idle' | 'busy' = 'idle';
  private busyTimer?: NodeJS.Timeout;
  private initialPromptSentAt: string | null = null;
  private lastActivityAt: string | null = null;
  private readonly nonces = new NonceCache();

  /** The container's environment (its token, session id, initial prompt), once resolved. */
  env: Record<string, string> = {};

  constructor(private readonly busyMs: number, uid: string) {
    this.rootSessionId = `ses_hollow${uid.replace(/-/g, '').slice(0, 20)}`;
  }

  /** The engine came up: the root session exists and the initial prompt (if any) is sent. */
  ready(): void {
    this.engineReady = true;
    if (this.env.SVC_INITIAL_PROMPT) {
      this.initialPromptSentAt = new Date().toISOString();
      this.busy();
    }
  }

  stop(): void {
    clearTimeout(this.busyTimer);
  }

  private busy(): void {
    this.run = 'busy';
    this.lastActivityAt = new Date().toISOString();
    clearTimeout(this.busyTimer);
    this.busyTimer = setTimeout(() => { this.run = 'idle'; this.lastActivityAt = new Date().toISOString(); }, this.busyMs);
    this.busyTimer.unref();
  }

  health(): Record<string, unknown> {
    const ready = this.engineReady;
    return {
      status: ready ? 'ok' : 'starting',
      hollow: true,
      daemon: { state: ready ? 'ready' : 'starting', error: null, pid: process.pid, started_at: this.startedAt },
      engine: {
        state: ready ? 'ready' : 'booting', restarts: 0, last_exit: null, last_error: null,
        root_session_id: ready ? this.rootSessionId : null, initial_prompt_sent_at: this.initialPromptSentAt,
        run: ready ? { type: this.run } : null,
      },
      repository: { url: null, branch: this.env.SVC_BRANCH_NAME ?? this.env.SVC_SESSION_ID ?? null, commit: null },
      runtime_env_names: [],
      last_activity_at: this.lastActivityAt,
    };
  }

  private authorized(req: IncomingMessage, target: ContextTarget): boolean {
    const token = this.env.SVC_SANDBOX_TOKEN ?? '';
    if (!token) return false;
    const header = req.headers[CONTEXT_HEADER];
    if (header !== undefined) {
      return verifyContextHeader(Array.isArray(header) ? undefined : header, { key: token, sessionId: this.env.SVC_SESSION_ID ?? '', target, nonces: this.nonces }) !== null;
    }
    return target.kind === 'control' && req.headers.authorization === `Bearer ${token}`;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // the body is not needed: drained so keep-alive goes on
    for await (const _chunk of req) { /* discard */ }
    const url = new URL(req.url ?? '/', 'http://hollow');
    const json = (status: number, body: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)); };
    if (url.pathname === '/svc/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'use GET' });
      return json(url.searchParams.get('ready') === '1' && !this.engineReady ? 503 : 200, this.health());
    }
    if (url.pathname.startsWith('/svc/')) {
      const name = url.pathname.slice('/svc/'.length);
      if (!['refresh', 'abort', 'env'].includes(name)) return json(404, { error: 'not found' });
      if (!this.authorized(req, { kind: 'control' })) { res.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized'); return; }
      if (req.method !== 'POST') return json(405, { error: 'use POST' });
      if (!this.engineReady) return json(503, { error: 'the engine is not ready' });
      if (name === 'abort') { this.idle(); return json(200, { aborted: true, session_id: this.rootSessionId }); }
      if (name === 'refresh') return json(200, { outcome: 'up-to-date', commit: null, engine: 'ready' });
      return json(200, { names: [], applies: 'at the next engine start' });
    }
    const proxy = /^\/proxy\/(\d+)(\/|$)/.exec(url.pathname);
    if (!this.authorized(req, proxy ? { kind: 'proxy', port: Number(proxy[1]) } : { kind: 'engine' })) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized');
      return;
    }
    this.lastActivityAt = new Date().toISOString();
    if (proxy) return json(502, { error: 'upstream unreachable' }); // nothing runs in a hollow sandbox
    if (!this.engineReady) return json(503, { error: 'the engine is booting' });
    const session = /^\/session\/([^/]+)(\/[a-z_]+)?$/.exec(url.pathname);
    if (req.method === 'GET' && url.pathname === '/global/health') return json(200, { healthy: true, version: 'hollow' });
    if (req.method === 'GET' && url.pathname === '/session') return json(200, [{ id: this.rootSessionId, title: `svc session ${this.env.SVC_SESSION_ID ?? ''}` }]);
    if (!session || decodeURIComponent(session[1]!) !== this.rootSessionId) return json(404, { error: 'not found' });
    if (req.method === 'POST' && session[2] === '/prompt_async') { this.busy(); res.writeHead(204).end(); return; }
    if (req.method === 'POST' && session[2] === '/abort') { this.idle(); return json(200, true); }
    if (req.method === 'GET' && session[2] === undefined) return json(200, { id: this.rootSessionId, title: `svc session ${this.env.SVC_SESSION_ID ?? ''}` });
    if (req.method === 'GET' && session[2] === '/message') return json(200, []);
    return json(404, { error: 'not found' });
  }

  private idle(): void {
    clearTimeout(this.busyTimer);
    this.run = 'idle';
    this.lastActivityAt = new Date().toISOString();
  }
}

/** A hollow Pod: no process; its daemon answers on the pod's address; the status is written as a kubelet would. */
export class HollowPod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly key: string;
  ip = '';
  stopped = false;
  private daemon?: HollowDaemon;
  private listeners: { port: number; listener: Listener }[] = [];
  private bootTimer?: NodeJS.Timeout;
  private conditions?: PodCondition[];
  private readonly startTime = new Date().toISOString();
  private writing = Promise.resolve();

  constructor(readonly obj: KObject, private readonly ctx: HollowContext) {
    const meta = obj.metadata ?? {};
    this.namespace = meta.namespace ?? 'default';
    this.name = meta.name ?? '';
    this.uid = meta.uid ?? '';
    this.key = `${this.namespace}/${this.name}`;
  }

  private get container(): Container {
    return ((this.obj.spec as { containers?: Container[] } | undefined)?.containers ?? [])[0] ?? { name: 'sandbox' };
  }

  private get ports(): number[] {
    const ports = ((this.obj.spec as { containers?: Container[] } | undefined)?.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
    return ports.length ? [...new Set(ports)] : [DEFAULT_HOLLOW_PORT];
  }

  /** Takes an address, listening on every port of the pod there; false when none is free. */
  async admit(): Promise<boolean> {
    const daemon = new HollowDaemon(annotationMs(this.obj, HOLLOW_BUSY_ANNOTATION, 100), this.uid);
    for (const ip of this.ctx.addresses.candidates()) {
      if (this.stopped) return true;
      const listeners: { port: number; listener: Listener }[] = [];
      try {
        for (const port of this.ports) listeners.push({ port, listener: await this.ctx.host.listen(ip, port, daemon) });
      } catch {
        for (const l of listeners) await this.ctx.host.unlisten(ip, l.port, l.listener);
        continue; // taken by another program (or simulator): the next address
      }
      this.ip = ip;
      this.listeners = listeners;
      this.daemon = daemon;
      return true;
    }
    return false;
  }

  /**
   * Plays the container: its environment resolved as the kubelet resolves it (a missing Secret is
   * CreateContainerConfigError, retried), then running, then ready once the hollow engine is.
   */
  async start(): Promise<void> {
    const daemon = this.daemon;
    if (!daemon || this.stopped) return;
    try {
      daemon.env = await resolveEnv({
        pod: this.obj, container: this.container, image: {}, podIP: this.ip, hostIP: this.ctx.hostIP, mounts: {}, commands: {}, defaultCwd: '/',
        sources: {
          secret: (name) => this.ctx.api.configData(this.namespace, 'secrets', name),
          configMap: (name) => this.ctx.api.configData(this.namespace, 'configmaps', name),
        },
      });
    } catch (err) {
      if (this.stopped) return;
      const message = (err as Error).message;
      this.write({ waiting: { reason: err instanceof ContainerConfigError ? 'CreateContainerConfigError' : 'CreateContainerError', message } }, false);
      void this.ctx.api.event(this.obj, 'Warning', 'Failed', `Error: ${message}`).catch(() => undefined);
      this.bootTimer = setTimeout(() => void this.start(), 2000);
      return;
    }
    if (this.stopped) return;
    const running = { running: { startedAt: new Date().toISOString() } };
    void this.ctx.api.event(this.obj, 'Normal', 'Started', `Started container ${this.container.name} (hollow)`).catch(() => undefined);
    const becomeReady = () => {
      if (this.stopped) return;
      daemon.ready();
      this.write(running, true);
    };
    const bootMs = annotationMs(this.obj, HOLLOW_BOOT_ANNOTATION, 0);
    if (bootMs === 0) return becomeReady(); // one status write: running and ready
    this.write(running, false);
    this.bootTimer = setTimeout(becomeReady, bootMs);
  }

  /** Writes the Pod status; writes in flight are chained (the last one wins). */
  private write(state: ContainerView['state'], ready: boolean): void {
    this.writing = this.writing.then(async () => {
      if (this.stopped) return;
      const container: ContainerView = {
        name: this.container.name, image: this.container.image ?? '', state, restartCount: 0, ready,
        ...('running' in state ? { containerID: `hollow://${this.uid}/${this.container.name}` } : {}),
      };
      const status = podStatus({
        podIP: this.ip || undefined, hostIP: this.ctx.hostIP, startTime: this.startTime, restartPolicy: 'Always',
        containers: [container], previousConditions: this.conditions, now: new Date().toISOString(),
      });
      this.conditions = status.conditions as PodCondition[];
      try {
        await this.ctx.api.patchPodStatus(this.namespace, this.name, this.uid, status);
      } catch (err) {
        if (!this.stopped) this.ctx.log(`hollow pod ${this.key}: status not written: ${(err as Error).message}`);
      }
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.bootTimer);
    this.daemon?.stop();
    for (const { port, listener } of this.listeners) await this.ctx.host.unlisten(this.ip, port, listener);
    if (this.ip) this.ctx.addresses.release(this.ip);
    await this.writing;
  }
}
