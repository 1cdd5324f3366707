// The injected sandbox environment (SPEC §2.6), as pure functions. Two halves, because two
// controllers know them: the Session controller knows the session (ids, branch, refs, agent,
// prompt) and writes those into the Sandbox's spec.env; the Sandbox controller, when it starts
// a sandbox, adds what must never sit in a resource: the tokens and the project's secrets (with
// their names and revision, read at the same moment so that they agree).
// Not injected: SVC_WORKSPACE, any git host token (SPEC §2.6).
import { withoutTrailingSlashes } from '../lib/trailing-slashes.js';

/** The daemon's external port as the agent sees it (SPEC §2.6, §8), whatever port the host gives it. */
export const SERVICE_PORT = '8000';

/** Variables carrying secret values: kept out of resources, argv and logs. */
export const SECRET_VARIABLES = ['SVC_SANDBOX_TOKEN', 'SVC_TOKEN', 'SVC_CLI_TOKEN', 'SVC_EXECUTOR_TOKEN', 'SVC_LLM_API_KEY'] as const;

/** Platform variables reserved for svc: a project secret never overrides one. */
const RESERVED_PREFIX = 'SVC_';

export interface SessionEnvInput {
  /** The Project's metadata.uid. */
  projectId: string;
  /** The session id (UUID): also the branch name. */
  sessionId: string;
  /** The clone URL the sandbox uses: the API's git gateway, never the host's URL. */
  repoUrl: string;
  defaultBranch: string;
  /** The ref the session branched from. */
  baseRef: string;
  /** The platform API base; `/v1` is appended when missing. */
  apiUrl: string;
  agent: string;
  model?: string;
  /** Only for the first sandbox of a session: a wake never sends it again. */
  initialPrompt?: string;
  /** The Project's spec.checkpoints: false turns the daemon's checkpoints off (SVC_CHECKPOINTS=0). */
  checkpoints?: boolean;
}

/** The API base ending in `/v1` (SPEC §2.6). */
export function apiBaseUrl(apiUrl: string): string {
  const trimmed = withoutTrailingSlashes(apiUrl);
  return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
}

/** The non-secret §2.6 variables that describe the session (what the Sandbox's spec.env holds). */
export function sessionEnv(input: SessionEnvInput): Record<string, string> {
  const env: Record<string, string> = {
    SVC_PROJECT_ID: input.projectId,
    SVC_SESSION_ID: input.sessionId,
    SVC_BRANCH_NAME: input.sessionId,
    SVC_HEAD_REF: input.sessionId,
    SVC_REPO_URL: input.repoUrl,
    SVC_DEFAULT_BRANCH: input.defaultBranch,
    SVC_BASE_REF: input.baseRef,
    SVC_SERVICE_PORT: SERVICE_PORT,
    SVC_API_URL: apiBaseUrl(input.apiUrl),
    SVC_AGENT_NAME: input.agent,
    SVC_PROJECT_AUTO_CLONE: '1',
    SVC_BOOTSTRAP_ENGINE_SESSION: '1',
  };
  if (input.model) env.SVC_ENGINE_MODEL = input.model;
  if (input.initialPrompt) env.SVC_INITIAL_PROMPT = input.initialPrompt;
  if (input.checkpoints === false) env.SVC_CHECKPOINTS = '0';
  return env;
}

export interface LaunchSecrets {
  /** The sandbox's own service key (SPEC §5.2). */
  sandboxToken: string;
  /** The session's project-scoped CLI token, acting as the launching user. */
  cliToken: string;
  /** The project's secrets by name, and the revision of that set. */
  projectSecrets: Record<string, string>;
  secretsRevision: string;
  /**
   * The model gateway (DESIGN §8.2), only when the project has at least one provider: the
   * session's own key and `name:protocol,...`. SVC_LLM_BASE_URL is SVC_API_URL + `/llm`.
   */
  gateway?: { key: string; providers: string };
}

/**
 * What a provider starts the sandbox with: `env` (plain: the session's variables plus the
 * secret names and revision) and `secretEnv` (the tokens and the secret values). A project
 * secret can neither use the reserved prefix nor shadow a platform variable.
 */
export function launchEnv(plain: Record<string, string>, secrets: LaunchSecrets): { env: Record<string, string>; secretEnv: Record<string, string> } {
  const names = Object.keys(secrets.projectSecrets).filter((name) => !name.startsWith(RESERVED_PREFIX) && !(name in plain)).sort();
  const env: Record<string, string> = {
    ...plain,
    SVC_PROJECT_SECRET_NAMES: names.join(','),
    SVC_PROJECT_SECRETS_REVISION: secrets.secretsRevision,
  };
  if (secrets.gateway && plain.SVC_API_URL) {
    env.SVC_LLM_BASE_URL = `${apiBaseUrl(plain.SVC_API_URL)}/llm`;
    env.SVC_LLM_PROVIDERS = secrets.gateway.providers;
  }
  const secretEnv: Record<string, string> = Object.fromEntries(names.map((name) => [name, secrets.projectSecrets[name]!]));
  Object.assign(secretEnv, {
    SVC_SANDBOX_TOKEN: secrets.sandboxToken,
    SVC_TOKEN: secrets.sandboxToken,
    SVC_CLI_TOKEN: secrets.cliToken,
    SVC_EXECUTOR_TOKEN: secrets.cliToken,
  });
  if (env.SVC_LLM_BASE_URL) secretEnv.SVC_LLM_API_KEY = secrets.gateway!.key;
  return { env, secretEnv };
}

/** spec.env entries (sorted by name) from a plain map. */
export function envList(env: Record<string, string>): { name: string; value: string }[] {
  return Object.keys(env).sort().map((name) => ({ name, value: env[name]! }));
}

/** A plain map from spec.env entries. */
export function envMap(list: readonly { name: string; value: string }[] | undefined): Record<string, string> {
  return Object.fromEntries((list ?? []).map((e) => [e.name, e.value]));
}
