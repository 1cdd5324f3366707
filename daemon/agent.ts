// svc-agent wiring: workspace, credential broker, engine supervisor, root session, activity and
// the HTTP server. One instance per sandbox.
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { isLocalRepoUrl, type AgentConfig } from './config.js';
import { CredentialBroker } from './credentials.js';
import { Workspace, redactUrls } from './git.js';
import { EngineSupervisor } from './engine.js';
import { modelError, redactSecrets, secretValues } from './engine-errors.js';
import { resolveEngineConfigDir } from './engine-config.js';
import { RootSession } from './root-session.js';
import { RuntimeEnv } from './runtime-env.js';
import { RequestAuth } from './auth.js';
import { createDaemonServer, type ControlResult } from './server.js';

export type DaemonState = 'starting' | 'cloning' | 'ready' | 'failed';

/**
 * Variables the engine (and so the agent's tools) never sees: the daemon's own key, and the
 * local knobs SPEC §2.6 says are not injected (SVC_WORKSPACE) or that only place the daemon.
 */
// SPEC §2.6 is what the agent sees: the sandbox token stays (the sandbox-identity routes are the
// agent's too, and it grants nothing beyond this session); the daemon's own local knobs go.
const HIDDEN_FROM_ENGINE = ['SVC_ENGINE_COMMAND', 'SVC_WORKSPACE', 'SVC_DAEMON_PORT'];

export class Agent {
  state: DaemonState = 'starting';
  error: string | null = null;
  /** epoch ms of the last authenticated request or engine event */
  lastActivity: number | null = null;
  readonly startedAt = new Date();
  readonly engine: EngineSupervisor;
  readonly workspace: Workspace;
  readonly rootSession: RootSession;
  private readonly env = new RuntimeEnv();
  private readonly broker: CredentialBroker | null;
  private readonly stateDir: string;
  /** What health must never show (it answers without authentication). */
  private readonly secrets = secretValues(process.env);
  private server: http.Server | null = null;
  private events: AbortController | null = null;

  constructor(private readonly config: AgentConfig) {
    this.stateDir = path.join(config.engineHome, '.svc-agent');
    const remote = config.repoUrl !== undefined && !isLocalRepoUrl(config.repoUrl) && config.apiUrl !== undefined;
    this.broker = remote
      ? new CredentialBroker({ apiUrl: config.apiUrl!, projectId: config.projectId, sandboxToken: config.sandboxToken, repoUrl: config.repoUrl! }, path.join(this.stateDir, 'git-credential.sock'))
      : null;
    this.workspace = new Workspace({
      workspace: config.workspace,
      branch: config.branch,
      baseRef: config.baseRef,
      repoUrl: config.repoUrl,
      sessionId: config.sessionId,
      agentName: config.agentName,
      credentialHelper: this.broker?.helperCommand(),
    });
    this.engine = new EngineSupervisor({
      port: config.enginePort,
      restart: config.restart,
      bootTimeoutMs: config.engineBootTimeoutMs,
      launch: () => this.engineLaunch(),
    });
    this.rootSession = new RootSession(this.engine, {
      stateDir: this.stateDir,
      sessionId: config.sessionId,
      agentName: config.agentName,
      engineModel: config.engineModel,
      initialPrompt: config.initialPrompt,
    });
    this.engine.onReady(() => this.onEngineReady());
  }

  private engineLaunch() {
    const configDir = resolveEngineConfigDir(this.config.workspace);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !HIDDEN_FROM_ENGINE.includes(k)) env[k] = v;
    Object.assign(env, this.env.entries(), {
      HOME: this.config.engineHome,
      ENGINE_CONFIG_DIR: configDir,
      OPENCODE_CONFIG_DIR: configDir,
      GIT_TERMINAL_PROMPT: '0',
    });
    return { command: this.config.engineCommand, cwd: this.config.workspace, env };
  }

  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Starts serving, prepares the workspace, starts the engine. Resolves once listening. */
  async start(): Promise<number> {
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.config.workspace, { recursive: true });
    const auth = new RequestAuth(this.config.sandboxToken, this.config.sessionId);
    this.server = createDaemonServer(auth, {
      health: () => this.health(),
      refresh: () => this.refresh(),
      abort: () => this.abort(),
      setEnv: (body) => this.env.update(body),
      engineState: () => this.engine.state,
      enginePort: this.config.enginePort,
      engineAuthorization: this.engine.authorization,
      ownPort: () => this.port(),
      touch: () => this.touch(),
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.config.servicePort, this.config.serviceHost, () => resolve());
    });
    await this.broker?.listen();
    void this.boot();
    return this.port();
  }

  port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  private async boot(): Promise<void> {
    try {
      if (this.config.autoClone) {
        this.state = 'cloning';
        await this.workspace.prepare();
      }
      this.state = 'ready';
      this.engine.start();
    } catch (err) {
      this.state = 'failed';
      this.error = redactUrls((err as Error).message);
      process.stderr.write(`svc-agent: workspace setup failed: ${this.error}\n`);
    }
  }

  private onEngineReady(): void {
    this.subscribeEvents();
    if (this.config.bootstrapSession && this.rootSession.id === null) {
      this.rootSession.bootstrap().catch((err: Error) => {
        process.stderr.write(`svc-agent: root session: ${err.message}\n`);
      });
    }
  }

  /** Every engine event counts as activity (for the idle sweep). */
  private subscribeEvents(): void {
    this.events?.abort();
    const controller = new AbortController();
    this.events = controller;
    void (async () => {
      try {
        const res = await fetch(`${this.engine.baseUrl}/event`, { headers: { authorization: this.engine.authorization }, signal: controller.signal });
        for await (const _chunk of res.body ?? []) this.touch();
      } catch { /* engine went away; the next ready subscribes again */ }
    })();
  }

  async health(): Promise<unknown> {
    const repo = await this.workspace.status().catch(() => ({ branch: null, commit: null }));
    let run: unknown = null;
    if (this.engine.state === 'ready' && this.rootSession.id) run = await this.rootSession.runStatus().catch(() => null);
    const modelProblem = modelError(run);
    return {
      status: this.state === 'failed' || this.engine.state === 'failed' ? 'failed' : this.state === 'ready' && this.engine.state === 'ready' ? 'ok' : 'starting',
      daemon: { state: this.state, error: this.error, pid: process.pid, started_at: this.startedAt.toISOString() },
      engine: {
        state: this.engine.state,
        restarts: this.engine.restarts,
        last_exit: this.engine.lastExit,
        next_restart_at: this.engine.nextRestartAt === null ? null : new Date(this.engine.nextRestartAt).toISOString(),
        last_error: this.engine.lastError === null ? null : redactSecrets(this.engine.lastError, this.secrets),
        stderr_tail: this.engine.stderrTail.lines().map((line) => redactSecrets(line, this.secrets)),
        model_error: modelProblem === null ? null : redactSecrets(modelProblem, this.secrets),
        root_session_id: this.rootSession.id,
        initial_prompt_sent_at: this.rootSession.initialPromptSentAt,
        run,
      },
      repository: {
        url: this.config.repoUrl === undefined ? null : redactUrls(this.config.repoUrl),
        branch: repo.branch ?? this.config.branch,
        commit: repo.commit,
      },
      runtime_env_names: this.env.names(),
      last_activity_at: this.lastActivity === null ? null : new Date(this.lastActivity).toISOString(),
    };
  }

  async refresh(): Promise<ControlResult> {
    if (!this.workspace.isRepository()) return { status: 409, body: { error: 'the workspace is not a git repository' } };
    let outcome;
    try {
      outcome = await this.workspace.refresh();
    } catch (err) {
      return { status: 502, body: { error: redactUrls((err as Error).message) } };
    }
    if (outcome.outcome === 'diverged') {
      return { status: 409, body: { error: 'the workspace has diverged from the session branch; nothing was changed', ...outcome } };
    }
    if (outcome.outcome === 'blocked') {
      return { status: 409, body: { error: 'local changes block the fast-forward; nothing was changed', ...outcome } };
    }
    if (this.state === 'ready') await this.engine.restart();
    return { status: 200, body: { ...outcome, engine: this.engine.state } };
  }

  async abort(): Promise<ControlResult> {
    if (this.engine.state !== 'ready') return { status: 503, body: { error: `engine is ${this.engine.state}` } };
    if (!this.rootSession.id) return { status: 409, body: { error: 'there is no root session to abort' } };
    const r = await this.rootSession.abort();
    return r.status === 200 ? { status: 200, body: { aborted: r.body === true, session_id: this.rootSession.id } } : { status: 502, body: { error: `engine answered ${r.status}` } };
  }

  async stop(): Promise<void> {
    this.events?.abort();
    await this.engine.stop();
    await this.broker?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
