// svc-agent wiring: workspace, credential broker, engine supervisor, root session, activity and
// the HTTP server. One instance per sandbox.
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { isLocalRepoUrl, type AgentConfig } from './config.js';
import { CredentialBroker } from './credentials.js';
import { Workspace, redactUrls } from './git.js';
import { EngineSupervisor } from './engine.js';
import { redactSecrets, secretValues } from './engine-errors.js';
import { modelError } from '../src/lib/model-error.js';
import { resolveEngineConfigDir } from './engine-config.js';
import { agentFileModels, discoverModels, gatewayEngineConfig, repositoryEngineConfigs } from './llm-gateway.js';
import { RootSession } from './root-session.js';
import { RuntimeEnv } from './runtime-env.js';
import { RequestAuth } from './auth.js';
import { createDaemonServer, type ControlResult } from './server.js';
import { EngineEvents } from './events.js';
import { ProgressWatcher } from './progress.js';
import { Checkpointer } from './checkpoint.js';
import { Conversation } from './conversation.js';
import { endProcessesWithHome } from './processes.js';
import { nextStartAttempt, transientCause, type StartStep } from '../src/lib/start-retry.js';
import type { DaemonBootMark, DaemonHealth } from '../src/lib/daemon-health.js';
import { snapshotOf, StateReporter } from './state-events.js';
import { checkpointRef } from '../src/lib/session-refs.js';
import { clipText } from '../src/lib/clip.js';
import { makeDirs } from '../src/lib/make-dirs.js';

export type DaemonState = 'starting' | 'cloning' | 'restoring' | 'ready' | 'failed';

/** Variables whose values never leave the sandbox in a checkpoint (plus the project's secrets, named in SVC_PROJECT_SECRET_NAMES). */
const SECRET_VARIABLES = ['SVC_SANDBOX_TOKEN', 'SVC_TOKEN', 'SVC_CLI_TOKEN', 'SVC_EXECUTOR_TOKEN', 'SVC_LLM_API_KEY'];

/**
 * Variables the engine (and so the agent's tools) never sees: the daemon's own key, and the
 * local knobs SPEC §2.6 says are not injected (SVC_WORKSPACE) or that only place the daemon.
 */
// SPEC §2.6 is what the agent sees: the sandbox token stays (the sandbox-identity routes are the
// agent's too, and it grants nothing beyond this session); the daemon's own local knobs go.
const HIDDEN_FROM_ENGINE = ['SVC_ENGINE_COMMAND', 'SVC_WORKSPACE', 'SVC_DAEMON_PORT'];
/**
 * A boot says it is starting only when it is not up this long after svc-agent starts: a quick one
 * (most: clone and engine in a few hundred ms) says `ready` alone, sparing the controllers a
 * round of reads and writes while the clone runs; a slow one still shows its boot timeline soon.
 */
const BOOT_QUIET_MS = 500;
/** The longest text of one health field (an error, git's stderr): 4 KiB says the cause. */
const HEALTH_TEXT = 4096;
/** A ready engine that refused the root session or the initial prompt: asked again after 1 s, 2 s, ... up to 30 s. */
const BOOTSTRAP_RETRY_MS = 1_000;
const BOOTSTRAP_RETRY_MAX_MS = 30_000;
/**
 * opencode's own calls to the internet, off unless the sandbox's environment (a project secret)
 * says otherwise: a sandbox has no internet by default (docs/sandboxes.md), and the model list
 * fetch alone then costs every engine start about 1.7 s of failed attempts; the engine's version
 * is svc's to choose, never an update's.
 */
export const ENGINE_OFFLINE_DEFAULTS: Readonly<Record<string, string>> = { OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' };

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
  readonly events: EngineEvents;
  readonly progress: ProgressWatcher;
  readonly checkpoints: Checkpointer;
  /** Tells the API when the state the controllers act on changes (null without SVC_API_URL). */
  private readonly stateEvents: StateReporter | null;
  /** What health must never show (it answers without authentication). */
  private readonly secrets = secretValues(process.env);
  private server: http.Server | null = null;
  /** Model ids the gateway's providers listed (asked once, before the first engine start). */
  private discoveredModels: Record<string, string[]> = {};
  private checkpointTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  /** When each phase of the boot happened (health's `boot`: the Session's boot timeline). */
  private readonly bootMarks: Record<DaemonBootMark, string | null> = {
    listening_at: null, clone_started_at: null, clone_ended_at: null, restore_started_at: null, restore_ended_at: null, engine_started_at: null, engine_ready_at: null,
  };
  private mark(phase: DaemonBootMark): void {
    this.bootMarks[phase] ??= new Date().toISOString();
  }
  private waitingOut: NonNullable<DaemonHealth['daemon']['retry']> | null = null;
  /** A start step waiting out a transient failure (health's daemon.retry; a state event). */
  get startRetry(): NonNullable<DaemonHealth['daemon']['retry']> | null {
    return this.waitingOut;
  }
  /** The start step that gave up (health's daemon.failed_step): the Sandbox's reason names it. */
  private failedStep: StartStep | null = null;
  private wakeRetry: (() => void) | null = null;
  private bootstrapping = false;
  private bootstrapFailures = 0;
  private bootstrapRetry: NodeJS.Timeout | null = null;

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
      // the clone and the checkpoint's fetch at boot carry the credential themselves (the agent's git asks the helper)
      gitEnv: () => (this.state === 'cloning' || this.state === 'restoring' ? this.broker?.gitAuthEnv() ?? {} : {}),
      cloneAlso: config.checkpoint.enabled ? checkpointRef(config.sessionId) : undefined,
    });
    this.engine = new EngineSupervisor({
      port: config.enginePort,
      restart: config.restart,
      bootTimeoutMs: config.engineBootTimeoutMs,
      logMaxBytes: config.engineLogMaxBytes,
      launch: () => this.engineLaunch(),
    });
    this.rootSession = new RootSession(this.engine, {
      stateDir: this.stateDir,
      sessionId: config.sessionId,
      agentName: config.agentName,
      engineModel: config.engineModel,
      initialPrompt: config.initialPrompt,
    });
    this.events = new EngineEvents(this.engine);
    this.events.onChunk(() => this.touch());
    this.progress = new ProgressWatcher(this.engine, this.events, config.progress, {
      onTurnEnd: () => void this.checkpoints.save('turn'),
      onStall: (reason) => this.recoverStalledEngine(reason),
    });
    const conversation = new Conversation(this.engine, this.rootSession, {
      stateDir: this.stateDir,
      importCommand: config.engineImportCommand,
      launch: () => this.engineLaunch(),
      secrets: () => this.secretValues(),
    });
    this.checkpoints = new Checkpointer(this.workspace, {
      sessionId: config.sessionId,
      stateDir: this.stateDir,
      policy: config.checkpoint,
      conversation,
    });
    this.engine.onReady(() => this.onEngineReady());
    this.stateEvents = config.apiUrl === undefined ? null : new StateReporter({
      apiUrl: config.apiUrl, sandboxToken: config.sandboxToken, snapshot: () => snapshotOf(this), log: (line) => process.stderr.write(line),
      bootQuietMs: BOOT_QUIET_MS,
    });
  }

  private secretValues(): string[] {
    const names = [...SECRET_VARIABLES, ...(process.env.SVC_PROJECT_SECRET_NAMES ?? '').split(',')];
    return names.map((name) => (name ? process.env[name] : undefined)).filter((v): v is string => typeof v === 'string' && v !== '');
  }

  private engineLaunch() {
    const configDir = resolveEngineConfigDir(this.config.workspace);
    const env: Record<string, string> = { ...ENGINE_OFFLINE_DEFAULTS };
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !HIDDEN_FROM_ENGINE.includes(k)) env[k] = v;
    Object.assign(env, this.env.entries(), {
      HOME: this.config.engineHome,
      ENGINE_CONFIG_DIR: configDir,
      OPENCODE_CONFIG_DIR: configDir,
      GIT_TERMINAL_PROMPT: '0',
    });
    const gateway = this.gatewayConfig(configDir);
    if (gateway) env.OPENCODE_CONFIG_CONTENT = JSON.stringify(gateway);
    return { command: this.config.engineCommand, cwd: this.config.workspace, env };
  }

  /** The model gateway's providers for the engine (docs/gateway.md), unless the repository declares its own. */
  private gatewayConfig(configDir: string): Record<string, unknown> | null {
    if (!this.config.llm) return null;
    return gatewayEngineConfig({
      gateway: this.config.llm,
      configs: repositoryEngineConfigs(configDir, this.config.workspace),
      engineModel: this.config.engineModel,
      agentModels: agentFileModels(configDir),
      discovered: this.discoveredModels,
    });
  }

  /** Providers nothing names a model of: asked for their models through the gateway, once. */
  private async discoverGatewayModels(): Promise<void> {
    const llm = this.config.llm;
    if (!llm) return;
    let configDir: string;
    try {
      configDir = resolveEngineConfigDir(this.config.workspace);
    } catch {
      return; // the engine start reports it
    }
    const probe = gatewayEngineConfig({ gateway: llm, configs: repositoryEngineConfigs(configDir, this.config.workspace), engineModel: this.config.engineModel, agentModels: agentFileModels(configDir), discovered: {} });
    if (!probe) return;
    const providers = probe.provider as Record<string, { npm?: string; models?: unknown }>;
    const unnamed = llm.providers.filter((p) => providers[p.name]?.npm !== undefined && providers[p.name]?.models === undefined);
    const found = await Promise.all(unnamed.map(async (p) => [p.name, await discoverModels(llm, p, llm.apiKey)] as const));
    this.discoveredModels = Object.fromEntries(found);
  }

  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Starts serving, prepares the workspace, starts the engine. Resolves once listening. */
  async start(): Promise<number> {
    makeDirs(this.stateDir, 0o700);
    makeDirs(this.config.workspace);
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
    this.mark('listening_at');
    this.stateEvents?.start();
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
        const freshAtBoot = !this.workspace.isRepository();
        this.mark('clone_started_at');
        // the clone carries it (no 401 round trip); git's helper asks again if this failed
        await this.broker?.credential().catch(() => undefined);
        const fresh = await this.startStep('clone', async () => {
          try {
            return await this.workspace.prepare();
          } catch (err) {
            // a clone cut off halfway is no checkout to build on: the next attempt starts clean
            if (freshAtBoot) this.workspace.clear();
            throw err;
          }
        });
        this.mark('clone_ended_at');
        // uncommitted work and the conversation of the session's last sandbox, before the engine starts
        this.state = 'restoring';
        if (this.checkpoints.enabled) this.mark('restore_started_at');
        await this.startStep('checkpoint fetch', () => this.checkpoints.restore(fresh));
        if (this.checkpoints.enabled) this.mark('restore_ended_at');
      }
      await this.discoverGatewayModels();
      if (this.stopping) return;
      this.state = 'ready';
      this.mark('engine_started_at');
      this.engine.start();
      if (this.checkpoints.enabled) {
        // during a turn: at most one checkpoint per interval, written only when the tree changed
        this.checkpointTimer = setInterval(() => {
          if (this.progress.busy && this.engine.state === 'ready') void this.checkpoints.save('interval');
        }, this.config.checkpoint.intervalMs);
        this.checkpointTimer.unref();
      }
    } catch (err) {
      if (this.stopping) return; // a start cut short by the stop did not fail
      this.state = 'failed';
      this.error = redactUrls((err as Error).message);
      process.stderr.write(`svc-agent: workspace setup failed: ${this.error}\n`);
    }
  }

  /**
   * Runs a start step, waiting out transient failures (the API restarting, the git host away, a
   * connection cut) with backoff until the start deadline; throws what failed and why otherwise.
   */
  private async startStep<T>(step: StartStep, run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const began = Date.now();
      try {
        const result = await run();
        this.waitingOut = null;
        return result;
      } catch (err) {
        if (this.stopping) throw err;
        const failure = this.startFailure(step, err as Error, began);
        const decision = nextStartAttempt(failure, attempt, this.startedAt.getTime(), Date.now(), this.config.startRetry);
        if ('fail' in decision) {
          this.waitingOut = null;
          this.failedStep = step;
          throw new Error(decision.fail);
        }
        this.waitingOut = { step, attempt, cause: decision.cause, error: failure.message, next_attempt_at: new Date(Date.now() + decision.retryInMs).toISOString() };
        process.stderr.write(`svc-agent: ${step} failed (attempt ${attempt}): ${decision.cause}; trying again in ${decision.retryInMs} ms: ${failure.message}\n`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, decision.retryInMs);
          this.wakeRetry = () => { clearTimeout(timer); resolve(); };
        });
        this.wakeRetry = null;
        if (this.stopping) throw new Error(`${step}: stopped while waiting to try again`);
      }
    }
  }

  /**
   * What failed: git's words, unless the credential it needed could not be fetched during the
   * attempt (git then only says it could not read a username): the credential call's words.
   */
  private startFailure(step: StartStep, err: Error, began: number) {
    const gitSaid = redactUrls(err.message);
    const credential = this.broker?.lastFailure;
    if (credential && credential.at >= began) {
      return { step, message: `the clone credential could not be fetched: ${credential.message}; ${gitSaid}`, cause: transientCause(credential.message) };
    }
    return { step, message: gitSaid, cause: transientCause(gitSaid) };
  }

  private onEngineReady(): void {
    this.mark('engine_ready_at');
    this.stateEvents?.notify(); // the start the controllers wait for: said at once, not at the next tick
    this.events.subscribe();
    this.progress.engineReady();
    this.progress.start();
    this.bootstrapRoot();
  }

  /**
   * Opens the root session and sends the initial prompt, until both are done: again at every
   * engine ready (an engine that died while it took the prompt), and with backoff while a ready
   * engine refuses. Until then health says why, and the controllers hold the session's other prompts.
   */
  private bootstrapRoot(): void {
    if (!this.config.bootstrapSession || this.rootSession.settled || this.bootstrapping || this.stopping) return;
    if (this.bootstrapRetry) clearTimeout(this.bootstrapRetry);
    this.bootstrapRetry = null;
    this.bootstrapping = true;
    this.rootSession.bootstrap().then(() => {
      this.bootstrapFailures = 0;
    }, (err: Error) => {
      this.bootstrapFailures++;
      process.stderr.write(`svc-agent: root session: ${err.message}\n`);
      if (this.engine.state !== 'ready' || this.stopping) return; // the engine's next ready tries again
      const delay = Math.min(BOOTSTRAP_RETRY_MS * 2 ** (this.bootstrapFailures - 1), BOOTSTRAP_RETRY_MAX_MS);
      this.bootstrapRetry = setTimeout(() => this.bootstrapRoot(), delay);
    }).finally(() => {
      this.bootstrapping = false;
      this.stateEvents?.notify();
    });
  }

  /** A stuck engine: abort its turn (it may still listen), then restart it; its conversation stays in the engine home. */
  private async recoverStalledEngine(reason: string): Promise<void> {
    if (this.stopping) return;
    const root = this.rootSession.id;
    if (root) await this.engine.call('POST', `/session/${encodeURIComponent(root)}/abort`, undefined, 2_000).catch(() => undefined);
    if (this.stopping) return;
    this.events.close();
    this.engine.recover(reason);
  }

  /**
   * GET /svc/health: the shape of src/lib/daemon-health.ts, which the operator parses. Its texts
   * are cut to HEALTH_TEXT: git's whole stderr or an engine's error could pass the 256 KiB the
   * controllers read, and then the sandbox showed no cause at all.
   */
  async health(): Promise<DaemonHealth> {
    // (while the clone writes the repository there is none to read: no git process meanwhile)
    const repo = this.state === 'cloning' ? { branch: null, commit: null } : await this.workspace.status().catch(() => ({ branch: null, commit: null }));
    let run: DaemonHealth['engine']['run'] = null;
    // a short timeout: a stuck engine must not hold up the health answer
    if (this.engine.state === 'ready' && this.rootSession.id) run = await this.rootSession.runStatus(2_000).catch(() => null);
    const modelProblem = modelError(run);
    const turnError = this.progress.lastTurnError(this.rootSession.id);
    return {
      status: this.state === 'failed' || this.engine.state === 'failed' ? 'failed' : this.state === 'ready' && this.engine.state === 'ready' ? 'ok' : 'starting',
      daemon: {
        state: this.state, error: this.error === null ? null : clipText(this.error, HEALTH_TEXT), pid: process.pid, started_at: this.startedAt.toISOString(),
        retry: this.startRetry && { ...this.startRetry, error: clipText(this.startRetry.error, HEALTH_TEXT) }, failed_step: this.state === 'failed' ? this.failedStep : null,
      },
      engine: {
        state: this.engine.state,
        restarts: this.engine.restarts,
        last_exit: this.engine.lastExit,
        next_restart_at: this.engine.nextRestartAt === null ? null : new Date(this.engine.nextRestartAt).toISOString(),
        last_error: this.engine.lastError === null ? null : clipText(redactSecrets(this.engine.lastError, this.secrets), HEALTH_TEXT),
        stderr_tail: this.engine.stderrTail.lines().map((line) => redactSecrets(line, this.secrets)),
        model_error: modelProblem === null ? null : clipText(redactSecrets(modelProblem, this.secrets), HEALTH_TEXT),
        root_session_id: this.rootSession.id,
        initial_prompt_sent_at: this.rootSession.initialPromptSentAt,
        initial_prompt_pending: this.rootSession.promptPending,
        root_session_error: this.rootSession.lastError === null ? null : clipText(redactSecrets(this.rootSession.lastError, this.secrets), HEALTH_TEXT),
        turn_error: turnError === null ? null : clipText(redactSecrets(turnError, this.secrets), HEALTH_TEXT),
        run,
      },
      repository: {
        url: this.config.repoUrl === undefined ? null : redactUrls(this.config.repoUrl),
        branch: repo.branch ?? this.config.branch,
        commit: repo.commit,
      },
      checkpoint: this.checkpoints.report(),
      progress: this.progress.report(),
      boot: { ...this.bootMarks },
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

  /**
   * SIGTERM: a checkpoint (at most the checkpoint stop timeout), then the engine and every process
   * of the sandbox (SIGTERM, SIGKILL after the stop grace), then the server.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeRetry?.();
    if (this.bootstrapRetry) clearTimeout(this.bootstrapRetry);
    this.stateEvents?.stop();
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.progress.stop();
    if (this.state === 'ready' && this.checkpoints.enabled) {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        this.checkpoints.save('stop'),
        new Promise<'timed out'>((resolve) => { timer = setTimeout(() => resolve('timed out'), this.config.checkpoint.stopTimeoutMs); }),
      ]);
      clearTimeout(timer);
      process.stderr.write(`svc-agent: checkpoint on stop: ${outcome}\n`);
    }
    this.events.close();
    const grace = this.config.stopGraceMs;
    const [, others] = await Promise.all([this.engine.stop(grace), endProcessesWithHome(this.config.engineHome, grace)]);
    if (others.length > 0) process.stderr.write(`svc-agent: ended ${others.length} other process(es) of the sandbox\n`);
    await this.broker?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
