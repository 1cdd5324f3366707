// The Session controller's side effects, one function per step of decide.ts (SessionStep):
// each does one thing and returns the facts it changed (and the Session when it wrote it).
import { BranchExistsError, InvalidRefError, openMirror, PushRejectedError, redact, RefNotFoundError, unreachableReason, type GitCredentials, type Mirror } from '../../src/git/index.js';
import { isAlreadyExists, isNotFound, readGitCredentials, readSecretData, retryOnConflict, type KubeClient } from '../../src/kube/index.js';
import { newToken, tokenSecret, TOKEN_LABEL, type TokenGrant } from '../../src/lib/api-tokens.js';
import { signContextHeader } from '../../src/lib/context-header.js';
import { transientCause } from '../../src/lib/start-retry.js';
import { newSandboxToken } from '../../src/lib/sandbox-token.js';
import type { ReconcileContext, StepResult } from '../../src/runtime/index.js';
import {
  BASE_SHA_ANNOTATION, LABEL_SESSION, SECRET, SESSION, STOP_REASON_ANNOTATION, removePromptsPatch, sessionSecret, sessionSecretName, sessionTokens,
  type KubeObject, type PendingPrompt, type Project, type Session, type SessionSecret,
} from '../../src/resources/index.js';
import type { BranchOutcome, SessionFacts, SessionStep } from './decide.js';

/** What the session's CLI token may do: everything an agent needs, never merging its own CR (SPEC §1 mandate 3). */
export const SESSION_CLI_CAPABILITIES = [
  'project.read', 'project.gitops.read', 'project.gitops.push', 'project.cr.open', 'project.session.read', 'project.trigger.read', 'project.secret.read',
] as const;

export interface StepSettings {
  /** Directory of the bare mirrors (shared with the Project controller). */
  mirrorDir: string;
  /** Namespace of the API token Secrets (SVC_NAMESPACE). */
  tokenNamespace: string;
}

type SessionStepResult = StepResult<Session, SessionFacts>;

/** The operator's mirror of the project's repository, reaching the host with the project's credentials. */
export function openProjectMirror(mirrorDir: string, project: Project, credentials: GitCredentials | null): Mirror {
  return openMirror({ cacheDir: mirrorDir, projectId: project.metadata.uid!, url: project.spec.repoUrl, credentials });
}

/**
 * The base ref's tip without a fetch: the commit the API read as its tip when it started the
 * session (BASE_SHA_ANNOTATION), when this mirror has the base ref there too. Else null: fetch.
 */
async function agreedBaseSha(mirror: Mirror, session: Session, baseRef: string): Promise<string | null> {
  const read = session.metadata.annotations?.[BASE_SHA_ANNOTATION];
  if (!read) return null;
  return (await mirror.resolveBranch(baseRef).catch(() => null)) === read ? read : null;
}

/** Pushes refs/heads/<session id> at the tip of the base ref to the project's repository. */
async function pushSessionBranch(client: KubeClient, mirrorDir: string, session: Session, project: Project, baseRef: string): Promise<BranchOutcome> {
  const lookup = await readGitCredentials(project, (namespace, name) => readSecretData(client, namespace, name));
  const where = redact(project.spec.repoUrl);
  if (!lookup.ok) return { kind: 'failed', reason: 'CredentialsNotFound', message: lookup.message };
  try {
    const mirror = openProjectMirror(mirrorDir, project, lookup.credentials);
    let sha = await agreedBaseSha(mirror, session, baseRef);
    if (!sha) {
      await mirror.fetch({ force: true });
      sha = await mirror.resolveBranch(baseRef) ?? await mirror.resolveCommit(baseRef).catch(() => null) ?? await mirror.resolveAbbreviatedCommit(baseRef);
    }
    if (!sha) return { kind: 'failed', reason: 'BaseRefNotFound', message: `the base ref ${baseRef} does not exist in ${where} as a branch or a commit id (tags are not read); push it or start the session from another ref` };
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
    // REST refuses such a name (400); a Session applied with kubectl reaches git with it
    if (error instanceof InvalidRefError && error.ref === baseRef) {
      return { kind: 'failed', reason: 'BaseRefNotFound', message: `the base ref ${JSON.stringify(baseRef)} is not a valid branch name or commit id (${error.reason}); start the session from another ref` };
    }
    // the Project's classification (host key, credentials, ...); git's redacted words in the message
    const reason = error instanceof PushRejectedError ? 'PushRejected' : unreachableReason(error) ?? 'RepositoryUnreachable';
    const words = (error as Error).message;
    // a host away or a connection cut is waited out (decide.ts); a rejection is not
    const cause = error instanceof PushRejectedError ? null : transientCause(words);
    return { kind: 'failed', reason, message: `could not create the session branch in ${where}: ${words}`, cause };
  }
}

/** The Session Secret with new tokens, for the next run of the sandbox (an earlier attempt's stays: AlreadyExists is done). */
async function writeSessionSecret(client: KubeClient, session: Session): Promise<void> {
  const fresh = { sandboxToken: newSandboxToken(session.metadata.name!), cliToken: newToken() };
  try {
    await client.resource<SessionSecret>(SECRET).create(sessionSecret(session, fresh));
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/**
 * The CLI token's Secret (an API token Secret in `tokenNamespace`), made from the Session
 * Secret's CLI token. Owned by the Session when both share a namespace (garbage collected with
 * it); else the Session's finalizer revokes it (revokeCliTokens).
 */
async function writeCliToken(client: KubeClient, session: Session, project: Project, tokenNamespace: string): Promise<void> {
  const name = session.metadata.name!;
  const tokens = sessionTokens(await client.resource<SessionSecret>(SECRET).find(session.metadata.namespace!, sessionSecretName(name)));
  if (!tokens) throw new Error(`the Secret ${sessionSecretName(name)} exists without the session's tokens`);
  const grant: TokenGrant = {
    userId: session.spec.createdBy && /^[0-9a-f-]{36}$/i.test(session.spec.createdBy) ? session.spec.createdBy : session.metadata.uid!,
    access: 'write',
    projectUid: project.metadata.uid!,
    capabilities: SESSION_CLI_CAPABILITIES,
  };
  const cli = tokenSecret(tokens.cliToken, grant, tokenNamespace);
  const owned = tokenNamespace === session.metadata.namespace;
  const stored = {
    ...cli,
    metadata: {
      ...cli.metadata,
      labels: { ...cli.metadata.labels, [LABEL_SESSION]: name },
      ...(owned ? { ownerReferences: [{ apiVersion: session.apiVersion!, kind: session.kind!, name, uid: session.metadata.uid!, blockOwnerDeletion: false }] } : {}),
    },
  };
  try {
    await client.resource<SessionSecret>(SECRET).create(stored as SessionSecret);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/**
 * The session's credentials are spent (their sandbox stopped): the CLI token first, then the
 * Session Secret, so that a reconcile cut in between finds the Session Secret and does it again.
 */
async function dropCredentials(client: KubeClient, session: Session, tokenNamespace: string): Promise<void> {
  await revokeCliTokens(client, tokenNamespace, session.metadata.name!);
  try {
    await client.resource<SessionSecret>(SECRET).delete(session.metadata.namespace!, sessionSecretName(session.metadata.name!));
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** Revokes the CLI tokens of a session (its Session Secret goes with it by owner reference). */
export async function revokeCliTokens(client: KubeClient, tokenNamespace: string, sessionId: string): Promise<void> {
  const secrets = client.resource<KubeObject>(SECRET);
  const list = await secrets.list(tokenNamespace, { labelSelector: `${LABEL_SESSION}=${sessionId},${TOKEN_LABEL}=true` });
  for (const secret of list.items) {
    try { await secrets.delete(tokenNamespace, secret.metadata.name!); } catch (error) { if (!isNotFound(error)) throw error; }
  }
}

/** Sends the prompts to the root engine session, oldest first, until one is not taken; returns the delivered ids. */
export async function sendPrompts(client: KubeClient, session: Session, step: Extract<SessionStep, { kind: 'deliver-prompts' }>): Promise<string[]> {
  const tokens = sessionTokens(await client.resource<SessionSecret>(SECRET).find(session.metadata.namespace!, sessionSecretName(session.metadata.name!)));
  if (!tokens) return [];
  const delivered: string[] = [];
  for (const prompt of step.prompts as PendingPrompt[]) {
    const header = signContextHeader(tokens.sandboxToken, { sub: session.spec.createdBy ?? session.metadata.uid!, sid: session.metadata.name!, scope: 'engine' });
    const res = await fetch(`http://${step.address}/session/${encodeURIComponent(step.rootSessionId)}/prompt_async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-user-context': header },
      body: JSON.stringify({ parts: [{ type: 'text', text: prompt.text }] }),
      // the daemon is untrusted: a redirect would send the prompt, and the operator, anywhere
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    }).catch(() => null);
    if (!res?.ok) { // kept for the next reconcile
      await res?.body?.cancel();
      break;
    }
    await res.body?.cancel();
    delivered.push(prompt.id);
  }
  return delivered;
}

export async function performSessionStep(session: Session, step: SessionStep, ctx: ReconcileContext, facts: SessionFacts, settings: StepSettings): Promise<SessionStepResult> {
  const { client } = ctx;
  const sessions = ctx.resource<Session>(SESSION);
  const namespace = session.metadata.namespace!;
  const name = session.metadata.name!;
  switch (step.kind) {
    case 'push-branch':
      return { observed: { branch: await pushSessionBranch(client, settings.mirrorDir, session, facts.project!, step.baseRef) } };
    case 'write-session-secret':
      await writeSessionSecret(client, session);
      return { observed: { secrets: { session: true, cli: false } } };
    case 'write-cli-token':
      await writeCliToken(client, session, facts.project!, settings.tokenNamespace);
      return { observed: { secrets: { session: true, cli: true } } };
    case 'drop-credentials':
      await dropCredentials(client, session, settings.tokenNamespace);
      return { observed: { secrets: { session: false, cli: false } } };
    case 'deliver-prompts': {
      const delivered = await sendPrompts(client, session, step);
      if (!delivered.length) return { observed: { delivered: 0 } };
      let first = true;
      const stored = await retryOnConflict(async () => {
        const current = first ? session : await sessions.client.get(namespace, name);
        first = false;
        return sessions.mergePatch(namespace, name, removePromptsPatch(current, delivered));
      }, { attempts: 6 });
      return { observed: { delivered: delivered.length }, object: stored };
    }
    case 'stop-idle': {
      const stored = await sessions.mergePatch(namespace, name, { metadata: { annotations: { [STOP_REASON_ANNOTATION]: 'Idle' } }, spec: { desiredState: 'stopped' } });
      return { object: stored };
    }
  }
}
