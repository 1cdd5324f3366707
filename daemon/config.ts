// svc-agent configuration: the injected sandbox environment (SPEC §2.6) plus the local knobs of
// issue 5 (workspace, engine home/port/command) and supervision tunables. Validated once at start.
import path from 'node:path';
import { parseProviders, type GatewaySettings } from './llm-gateway.js';
import { resolveEngineCommand } from '../src/lib/engine-path.js';
import { splitWords } from './words.js';
import { DEFAULT_START_RETRY, type StartRetryPolicy } from '../src/lib/start-retry.js';
// defaults of the stop sequence; a provider's grace period covers both
import { STOP_CHECKPOINT_TIMEOUT_MS, STOP_GRACE_MS } from '../src/lib/sandbox-stop.js';

export class ConfigError extends Error {}

export interface RestartPolicy {
  /** restarts allowed inside `windowMs` before the engine is declared failed */
  maxRestarts: number;
  windowMs: number;
  /** first backoff; doubled per restart in the window, capped at `maxBackoffMs` */
  backoffMs: number;
  maxBackoffMs: number;
}

export interface AgentConfig {
  projectId: string;
  sessionId: string;
  branch: string;
  baseRef: string | undefined;
  repoUrl: string | undefined;
  apiUrl: string | undefined;
  sandboxToken: string;
  serviceHost: string;
  /** 0 picks a free port (printed on stdout) */
  servicePort: number;
  workspace: string;
  engineHome: string;
  enginePort: number;
  engineCommand: string[];
  autoClone: boolean;
  bootstrapSession: boolean;
  agentName: string | undefined;
  engineModel: string | undefined;
  initialPrompt: string | undefined;
  restart: RestartPolicy;
  engineBootTimeoutMs: number;
  /** The most of the engine's output copied to svc-agent's log (SVC_ENGINE_LOG_MAX_BYTES): the host keeps that file. */
  engineLogMaxBytes: number;
  /** The model gateway (SVC_LLM_BASE_URL, SVC_LLM_PROVIDERS, SVC_LLM_API_KEY), when the sandbox has it. */
  llm: (GatewaySettings & { apiKey: string }) | undefined;
  /** how the engine imports a saved conversation (`{file}` replaced); null: it cannot */
  engineImportCommand: string[] | null;
  checkpoint: CheckpointPolicy;
  progress: ProgressPolicy;
  /** on SIGTERM, after the checkpoint: how long the engine and the sandbox's processes get before SIGKILL */
  stopGraceMs: number;
  /** the clone and the checkpoint fetch wait out transient failures this long (start-retry.ts) */
  startRetry: StartRetryPolicy;
}

export interface CheckpointPolicy {
  /** SVC_CHECKPOINTS=0 turns checkpoints (and the conversation they carry) off */
  enabled: boolean;
  /** during a turn, at most one checkpoint this often (only when the tree changed) */
  intervalMs: number;
  /** on SIGTERM, how long the checkpoint may take before the sandbox stops without it */
  stopTimeoutMs: number;
}

export interface ProgressPolicy {
  /** a turn with no engine event (and no tool reported running) this long is stalled */
  timeoutMs: number;
  /** how often the engine's health is probed while it is ready */
  healthIntervalMs: number;
  /** a probe that takes longer failed */
  healthTimeoutMs: number;
  /** this many failed probes in a row: stalled */
  healthFailures: number;
}

export const DEFAULT_ENGINE_COMMAND = 'opencode serve --hostname 127.0.0.1 --port {port}';
const REQUIRED = ['SVC_PROJECT_ID', 'SVC_SESSION_ID', 'SVC_SANDBOX_TOKEN'] as const;
// A branch name git accepts and that needs no quoting anywhere (session ids are UUIDs).
const BRANCH_PATTERN = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)[A-Za-z0-9._/-]{1,200}(?<![./])$/;

type Env = Record<string, string | undefined>;

function value(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function port(env: Env, name: string, fallback: number, allowZero: boolean): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  const n = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(n <= 65535 && (n >= 1 || (allowZero && n === 0)))) {
    throw new ConfigError(`${name} must be a port number ${allowZero ? '0' : '1'}..65535, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function engineImportCommand(env: Env, engineCommand: string[]): string[] | null {
  const raw = value(env, 'SVC_ENGINE_IMPORT_COMMAND');
  if (raw !== undefined) {
    let words: string[];
    try {
      words = splitWords(raw);
    } catch (err) {
      throw new ConfigError(`SVC_ENGINE_IMPORT_COMMAND: ${(err as Error).message}`);
    }
    if (words.length === 0 || !words.includes('{file}')) throw new ConfigError('SVC_ENGINE_IMPORT_COMMAND must name the file as {file}');
    return words;
  }
  // opencode: `<engine> serve ...` imports with `<engine> import <file>` (docs/sessions.md)
  const serve = engineCommand.indexOf('serve');
  return serve > 0 ? [...engineCommand.slice(0, serve), 'import', '{file}'] : null;
}

function absolutePath(env: Env, name: string, fallback: string): string {
  const p = value(env, name) ?? fallback;
  if (!path.isAbsolute(p)) throw new ConfigError(`${name} must be an absolute path, got ${JSON.stringify(p)}`);
  return path.resolve(p);
}

function flag(env: Env, name: string, fallback = false): boolean {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (raw === '0') return false;
  if (raw === '1') return true;
  throw new ConfigError(`${name} must be 1 or 0, got ${JSON.stringify(raw)}`);
}

/** A repository URL that needs no credential: a local path or file:// URL. */
export function isLocalRepoUrl(url: string): boolean {
  return url.startsWith('/') || url.startsWith('file://') || url.startsWith('./') || url.startsWith('../');
}

export function loadConfig(env: Env): AgentConfig {
  const missing = REQUIRED.filter((name) => value(env, name) === undefined);
  if (missing.length > 0) throw new ConfigError(`missing required environment: ${missing.join(', ')}`);
  const sessionId = value(env, 'SVC_SESSION_ID')!;
  const branch = value(env, 'SVC_BRANCH_NAME') ?? sessionId;
  if (!BRANCH_PATTERN.test(branch)) throw new ConfigError(`SVC_BRANCH_NAME is not a usable branch name: ${JSON.stringify(branch)}`);
  const autoClone = flag(env, 'SVC_PROJECT_AUTO_CLONE');
  const repoUrl = value(env, 'SVC_REPO_URL');
  const apiUrl = value(env, 'SVC_API_URL')?.replace(/\/+$/, '');
  if (autoClone && repoUrl === undefined) throw new ConfigError('SVC_PROJECT_AUTO_CLONE=1 needs SVC_REPO_URL');
  if (autoClone && repoUrl !== undefined && !isLocalRepoUrl(repoUrl) && apiUrl === undefined) {
    throw new ConfigError('SVC_PROJECT_AUTO_CLONE=1 with a remote SVC_REPO_URL needs SVC_API_URL (for the clone credential)');
  }
  if (apiUrl !== undefined && !/^https?:\/\//.test(apiUrl)) throw new ConfigError(`SVC_API_URL must be an http(s) URL, got ${JSON.stringify(apiUrl)}`);
  const enginePort = port(env, 'SVC_ENGINE_PORT', 4096, false);
  let engineCommand: string[];
  try {
    // a bare `opencode` is the pinned one of the installed package, whatever PATH holds
    engineCommand = resolveEngineCommand(splitWords(value(env, 'SVC_ENGINE_COMMAND') ?? DEFAULT_ENGINE_COMMAND).map((w) => w.replaceAll('{port}', String(enginePort))));
  } catch (err) {
    throw new ConfigError(`SVC_ENGINE_COMMAND: ${(err as Error).message}`);
  }
  if (engineCommand.length === 0) throw new ConfigError('SVC_ENGINE_COMMAND is empty');
  // SVC_DAEMON_PORT: where a host running several sandboxes (the process provider) makes the
  // daemon listen; SVC_SERVICE_PORT then stays the spec's 8000 for the agent to see.
  const llm = llmSettings(env);
  const servicePort = value(env, 'SVC_DAEMON_PORT') !== undefined ? port(env, 'SVC_DAEMON_PORT', 0, true) : port(env, 'SVC_SERVICE_PORT', 8000, true);
  if (servicePort === enginePort) throw new ConfigError('SVC_SERVICE_PORT and SVC_ENGINE_PORT must differ');
  return {
    projectId: value(env, 'SVC_PROJECT_ID')!,
    sessionId,
    branch,
    baseRef: value(env, 'SVC_BASE_REF') ?? value(env, 'SVC_DEFAULT_BRANCH'),
    repoUrl,
    apiUrl,
    sandboxToken: value(env, 'SVC_SANDBOX_TOKEN')!,
    // loopback unless told otherwise: the sandbox pod sets 0.0.0.0 explicitly (images/sandbox)
    serviceHost: value(env, 'SVC_SERVICE_HOST') ?? '127.0.0.1',
    servicePort,
    workspace: absolutePath(env, 'SVC_WORKSPACE', '/workspace'),
    engineHome: absolutePath(env, 'SVC_ENGINE_HOME', '/opt/svc/home'),
    enginePort,
    engineCommand,
    autoClone,
    bootstrapSession: flag(env, 'SVC_BOOTSTRAP_ENGINE_SESSION'),
    agentName: value(env, 'SVC_AGENT_NAME'),
    engineModel: value(env, 'SVC_ENGINE_MODEL'),
    initialPrompt: value(env, 'SVC_INITIAL_PROMPT'),
    restart: {
      maxRestarts: positiveInt(env, 'SVC_ENGINE_MAX_RESTARTS', 5),
      windowMs: positiveInt(env, 'SVC_ENGINE_RESTART_WINDOW_MS', 600_000),
      backoffMs: positiveInt(env, 'SVC_ENGINE_RESTART_BACKOFF_MS', 1_000),
      maxBackoffMs: positiveInt(env, 'SVC_ENGINE_RESTART_MAX_BACKOFF_MS', 30_000),
    },
    engineBootTimeoutMs: positiveInt(env, 'SVC_ENGINE_BOOT_TIMEOUT_MS', 60_000),
    engineLogMaxBytes: positiveInt(env, 'SVC_ENGINE_LOG_MAX_BYTES', 16 * 1024 * 1024),
    llm,
    engineImportCommand: engineImportCommand(env, engineCommand),
    checkpoint: {
      enabled: flag(env, 'SVC_CHECKPOINTS', true),
      intervalMs: positiveInt(env, 'SVC_CHECKPOINT_INTERVAL_MS', 60_000),
      stopTimeoutMs: positiveInt(env, 'SVC_CHECKPOINT_STOP_TIMEOUT_MS', STOP_CHECKPOINT_TIMEOUT_MS),
    },
    progress: {
      timeoutMs: positiveInt(env, 'SVC_ENGINE_PROGRESS_TIMEOUT_MS', 600_000),
      healthIntervalMs: positiveInt(env, 'SVC_ENGINE_HEALTH_INTERVAL_MS', 10_000),
      healthTimeoutMs: positiveInt(env, 'SVC_ENGINE_HEALTH_TIMEOUT_MS', 10_000),
      healthFailures: Math.max(1, positiveInt(env, 'SVC_ENGINE_HEALTH_FAILURES', 3)),
    },
    stopGraceMs: positiveInt(env, 'SVC_STOP_GRACE_MS', STOP_GRACE_MS),
    startRetry: {
      deadlineMs: positiveInt(env, 'SVC_START_DEADLINE_MS', DEFAULT_START_RETRY.deadlineMs),
      backoffMs: positiveInt(env, 'SVC_START_RETRY_BACKOFF_MS', DEFAULT_START_RETRY.backoffMs),
      maxBackoffMs: positiveInt(env, 'SVC_START_RETRY_MAX_BACKOFF_MS', DEFAULT_START_RETRY.maxBackoffMs),
    },
  };
}

/** All three SVC_LLM_* variables, or none: the sandbox of a project without providers has none of them. */
function llmSettings(env: Env): AgentConfig['llm'] {
  const baseUrl = value(env, 'SVC_LLM_BASE_URL')?.replace(/\/+$/, '');
  const apiKey = value(env, 'SVC_LLM_API_KEY');
  if (baseUrl === undefined || apiKey === undefined) return undefined;
  if (!/^https?:\/\//.test(baseUrl)) throw new ConfigError(`SVC_LLM_BASE_URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  const { providers, ignored } = parseProviders(value(env, 'SVC_LLM_PROVIDERS') ?? '');
  if (ignored.length > 0) process.stderr.write(`svc-agent: SVC_LLM_PROVIDERS entries ignored (want name:openai|anthropic): ${ignored.join(', ')}\n`);
  return { baseUrl, apiKey, providers };
}
