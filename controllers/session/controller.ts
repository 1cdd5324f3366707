// The Session controller (the only writer of Session status): pushes the session branch at the
// tip of its base ref with the project's own credentials, writes the Session Secret (sandbox
// token + the session's CLI token) and the Sandbox, delivers pending prompts to the root engine
// session once running, and stops idle sessions. The pure decisions are in desired.ts.
import { BranchExistsError, openMirror, PushRejectedError, redact, RefNotFoundError } from '../../src/git/index.js';
import { isAlreadyExists, isConflict, isNotFound, readGitCredentials, readSecretData, type KubeClient } from '../../src/kube/index.js';
import { newToken, tokenSecret, type TokenGrant } from '../../src/lib/api-tokens.js';
import { signContextHeader } from '../../src/lib/context-header.js';
import { newSandboxToken } from '../../src/lib/sandbox-token.js';
import type { ControllerDefinition, ReconcileContext } from '../../src/runtime/index.js';
import { updateStatus } from '../../src/runtime/status.js';
import {
  LABEL_SESSION, PROJECT, SANDBOX, SECRET, SESSION, STOP_REASON_ANNOTATION, pendingPrompts, removePromptsPatch, sessionSecret, sessionSecretName, sessionTokens,
  type KubeObject, type Project, type Sandbox, type SandboxProvider, type Session, type SessionSecret,
} from '../../src/resources/index.js';
import { readDaemonHealth, type DaemonHealth } from '../../src/sandbox/index.js';
import {
  baseRefOf, desiredSandbox, isIdle, nextSessionStatus, requeueAfterMs, sandboxSpecPatch, type BranchOutcome, type SandboxSettings,
} from './desired.js';

/** What the session's CLI token may do: everything an agent needs, never merging its own CR (SPEC §1 mandate 3). */
export const SESSION_CLI_CAPABILITIES = [
  'project.read', 'project.gitops.read', 'project.gitops.push', 'project.cr.open', 'project.session.read', 'project.trigger.read', 'project.secret.read',
] as const;
/** The default idle timeout (issue 10: 30 minutes). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;

export interface SessionControllerOptions {
  /** Directory of the bare mirrors (shared with the Project controller). */
  mirrorDir: string;
  /** The API base the sandboxes use (SVC_SANDBOX_API_URL), ending in /v1. */
  apiUrl: string;
  /** SVC_REPO_URL for a project (the git gateway). */
  repoUrl: SandboxSettings['repoUrl'];
  provider: SandboxProvider;
  /** Namespace of the API token Secrets (SVC_NAMESPACE). */
  tokenNamespace: string;
  /** Idle timeout when the Project sets none. */
  idleTimeoutMs?: number;
  now?: () => Date;
}

type SecretObject = KubeObject & { data?: Record<string, string> };

/** Pushes refs/heads/<session id> at the tip of the base ref to the project's repository. */
async function pushSessionBranch(client: KubeClient, mirrorDir: string, session: Session, project: Project): Promise<BranchOutcome> {
  const lookup = await readGitCredentials(project, (namespace, name) => readSecretData(client, namespace, name));
  const where = redact(project.spec.repoUrl);
  if (!lookup.ok) return { kind: 'failed', reason: 'CredentialsNotFound', message: lookup.message };
  const credentials = lookup.credentials;
  const baseRef = baseRefOf(session, project);
  try {
    const mirror = openMirror({ cacheDir: mirrorDir, projectId: project.metadata.uid!, url: project.spec.repoUrl, credentials });
    await mirror.fetch({ force: true });
    let sha = await mirror.resolveBranch(baseRef);
    if (!sha) sha = await mirror.resolveCommit(baseRef).catch(() => null);
    if (!sha) return { kind: 'failed', reason: 'BaseRefNotFound', message: `the base ref ${baseRef} does not exist in ${where}; push it or start the session from another ref` };
    try {
      const { created } = await mirror.pushBranch(session.metadata.name!, sha);
      return { kind: 'ready', baseSha: sha, created };
    } catch (error) {
      // Pushed by an earlier attempt whose status write was lost, then moved on by the agent: keep it.
      if (error instanceof BranchExistsError) return { kind: 'ready', baseSha: sha, created: false };
      throw error;
    }
  } catch (error) {
    if (error instanceof RefNotFoundError) return { kind: 'failed', reason: 'BaseRefNotFound', message: `the base ref ${baseRef} does not exist in ${where}` };
    const rejected = error instanceof PushRejectedError;
    return { kind: 'failed', reason: rejected ? 'PushRejected' : 'RepositoryUnreachable', message: `could not create the session branch in ${where}: ${(error as Error).message}` };
  }
}

/** The Session Secret (created once) and the CLI token's Secret (re-created from it when lost). */
async function ensureSessionSecrets(client: KubeClient, session: Session, project: Project, tokenNamespace: string): Promise<{ sandboxToken: string; cliToken: string }> {
  const secrets = client.resource<SessionSecret>(SECRET);
  const namespace = session.metadata.namespace!;
  let tokens = sessionTokens(await secrets.find(namespace, sessionSecretName(session.metadata.name!)));
  if (!tokens) {
    const fresh = { sandboxToken: newSandboxToken(session.metadata.name!), cliToken: newToken() };
    try {
      await secrets.create(sessionSecret(session, fresh));
      tokens = fresh;
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      tokens = sessionTokens(await secrets.get(namespace, sessionSecretName(session.metadata.name!)));
      if (!tokens) throw new Error(`the Secret ${sessionSecretName(session.metadata.name!)} exists without the session's tokens`);
    }
  }
  const grant: TokenGrant = {
    userId: session.spec.createdBy && /^[0-9a-f-]{36}$/i.test(session.spec.createdBy) ? session.spec.createdBy : session.metadata.uid!,
    access: 'write',
    projectUid: project.metadata.uid!,
    capabilities: SESSION_CLI_CAPABILITIES,
  };
  const cli = tokenSecret(tokens.cliToken, grant, tokenNamespace);
  const stored: SecretObject = {
    ...cli,
    metadata: {
      ...cli.metadata,
      labels: { ...cli.metadata.labels, [LABEL_SESSION]: session.metadata.name! },
      // Garbage-collected with the Session when both live in one namespace; else revoked by label.
      ...(tokenNamespace === namespace ? { ownerReferences: [{ apiVersion: session.apiVersion!, kind: session.kind!, name: session.metadata.name!, uid: session.metadata.uid!, blockOwnerDeletion: false }] } : {}),
    },
  };
  if (!(await secrets.find(tokenNamespace, cli.metadata.name))) {
    try { await secrets.create(stored as SessionSecret); } catch (error) { if (!isAlreadyExists(error)) throw error; }
  }
  return tokens;
}

/** Revokes the CLI tokens of a deleted session (its Session Secret goes with it by owner reference). */
async function revokeCliTokens(client: KubeClient, tokenNamespace: string, sessionId: string): Promise<void> {
  const secrets = client.resource<SecretObject>(SECRET);
  const list = await secrets.list(tokenNamespace, { labelSelector: `${LABEL_SESSION}=${sessionId}` });
  for (const secret of list.items) {
    if (secret.metadata.labels?.['svc.dev/token'] !== 'true') continue;
    try { await secrets.delete(tokenNamespace, secret.metadata.name!); } catch (error) { if (!isNotFound(error)) throw error; }
  }
}

/** Sends the pending prompts to the root engine session, oldest first; returns how many went out. */
async function deliverPrompts(client: KubeClient, session: Session, address: string, health: DaemonHealth, sandboxToken: string): Promise<number> {
  const prompts = pendingPrompts(session);
  const root = health.engine.root_session_id;
  if (!prompts.length || !root) return 0;
  // The initial prompt goes first (the daemon sends it); follow-ups wait for it.
  if (session.spec.initialPrompt && !session.status?.startedAt && !health.engine.initial_prompt_sent_at) return 0;
  const delivered: string[] = [];
  for (const prompt of prompts) {
    const header = signContextHeader(sandboxToken, { sub: session.spec.createdBy ?? session.metadata.uid!, sid: session.metadata.name!, scope: 'engine' });
    const res = await fetch(`http://${address}/session/${encodeURIComponent(root)}/prompt_async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-user-context': header },
      body: JSON.stringify({ parts: [{ type: 'text', text: prompt.text }] }),
      signal: AbortSignal.timeout(10_000),
    }).catch(() => null);
    if (!res?.ok) break; // kept for the next reconcile
    await res.body?.cancel();
    delivered.push(prompt.id);
  }
  if (!delivered.length) return 0;
  const sessions = client.resource<Session>(SESSION);
  for (let attempt = 0; ; attempt++) {
    const current = attempt === 0 ? session : await sessions.get(session.metadata.namespace!, session.metadata.name!);
    try {
      await sessions.mergePatch(session.metadata.namespace!, session.metadata.name!, removePromptsPatch(current, delivered));
      return delivered.length;
    } catch (error) {
      if (!isConflict(error) || attempt >= 5) throw error;
    }
  }
}

export function sessionController(options: SessionControllerOptions): ControllerDefinition {
  const now = options.now ?? (() => new Date());
  const settings: SandboxSettings = { apiUrl: options.apiUrl, repoUrl: options.repoUrl, provider: options.provider };
  return {
    name: 'session',
    for: SESSION,
    owns: [SANDBOX],
    concurrency: 4,
    async reconcile(key, ctx: ReconcileContext) {
      const { client } = ctx;
      const sessions = client.resource<Session>(SESSION);
      const cached = ctx.informer<Session>(SESSION).get(key.namespace, key.name);
      if (!cached) return revokeCliTokens(client, options.tokenNamespace, key.name);
      const session = sessions.decode(cached);
      if (session.metadata.deletionTimestamp) return;
      const cachedProject = ctx.informer<Project>(PROJECT).get(key.namespace, session.spec.projectRef.name);
      const project = cachedProject ? client.resource<Project>(PROJECT).decode(cachedProject) : null;
      const failed = session.status?.status === 'failed';

      let branch: BranchOutcome | null = null;
      if (project && !failed && !session.status?.baseSha) branch = await pushSessionBranch(client, options.mirrorDir, session, project);
      const branchReady = !!session.status?.baseSha || branch?.kind === 'ready';

      const sandboxes = client.resource<Sandbox>(SANDBOX);
      const cachedSandbox = ctx.informer<Sandbox>(SANDBOX).get(key.namespace, key.name);
      let sandbox = cachedSandbox ? sandboxes.decode(cachedSandbox) : null;
      let tokens: { sandboxToken: string; cliToken: string } | null = null;
      let health: DaemonHealth | null = null;
      let delivered = 0;
      if (project && branchReady) {
        const desired = desiredSandbox(session, project, settings);
        if (desired.spec.desiredState === 'running' && sandbox?.status?.state !== 'active') {
          tokens = await ensureSessionSecrets(client, session, project, options.tokenNamespace);
        }
        if (!sandbox && (!failed && session.spec.desiredState !== 'stopped')) {
          try {
            sandbox = await sandboxes.create(desired);
          } catch (error) {
            if (!isAlreadyExists(error)) throw error;
            sandbox = await sandboxes.get(key.namespace, key.name);
          }
        } else if (sandbox) {
          const patch = sandboxSpecPatch(sandbox, desired);
          if (patch) sandbox = await sandboxes.mergePatch(key.namespace, key.name, patch);
        }
        const address = sandbox?.status?.address;
        if (sandbox?.status?.state === 'active' && address && sandbox.spec.desiredState === 'running') {
          health = await readDaemonHealth(address);
          const idleTimeoutMs = project.spec.idleTimeoutSeconds ? project.spec.idleTimeoutSeconds * 1000 : options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
          if (isIdle(session, health, idleTimeoutMs, now())) {
            await sessions.mergePatch(key.namespace, key.name, { metadata: { annotations: { [STOP_REASON_ANNOTATION]: 'Idle' } }, spec: { desiredState: 'stopped' } });
            return; // the update comes back as a new reconcile
          }
          if (health?.engine.state === 'ready' && pendingPrompts(session).length) {
            tokens ??= sessionTokens(await client.resource<SessionSecret>(SECRET).find(key.namespace, sessionSecretName(key.name)));
            if (tokens) delivered = await deliverPrompts(client, session, address, health, tokens.sandboxToken);
          }
        }
      }

      const outcome = nextSessionStatus(session, { project, branch, sandbox, health, delivered }, now());
      let written = session;
      try {
        written = await updateStatus(sessions, delivered ? await sessions.get(key.namespace, key.name) : session, outcome.status);
      } catch (error) {
        if (isConflict(error)) return { requeueAfter: 200 };
        throw error;
      }
      for (const event of outcome.events) await client.recordEvent(written, event);
      const after = requeueAfterMs(outcome.status.status);
      return after ? { requeueAfter: after } : undefined;
    },
  };
}
