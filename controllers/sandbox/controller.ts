// The Sandbox controller (on the runtime's object reconciler): makes a sandbox (through the
// provider) match its Sandbox resource and writes the Sandbox status (its only writer). The tokens and the project's secrets are read
// here, at launch, from the Session Secret and the project secrets Secret, and handed to the
// provider: they never enter a resource. A finalizer lets the provider remove the process or
// Pod when the Sandbox goes (with its Session); the status says `archived` meanwhile.
import { isAlreadyExists, isConflict, isNotFound, type KubeClient } from '../../src/kube/index.js';
import { redactText } from '../../src/lib/log.js';
import { redactSecrets } from '../../src/lib/redact-secrets.js';
import {
  annotationsChanged, anyOf, generationChanged, labelsChanged, objectController, type ControllerDefinition, type Predicate, type ReconcileContext,
} from '../../src/runtime/index.js';
import {
  DAEMON_LOG_TAIL_BYTES, FINALIZER, PROJECT, SANDBOX, SECRET, SESSION, llmProviderInfos, llmProvidersEnv, llmProvidersSecretName, logTail, projectSecretsName, secretValues,
  secretsRevision, sessionLogSecret, sessionLogSecretName, sessionSecretName, sessionTokens,
  type LlmProvidersSecret, type Project, type ProjectSecretsSecret, type Sandbox, type Session, type SessionLogSecret, type SessionSecret,
} from '../../src/resources/index.js';
import { isSessionId, llmKey } from '../../src/lib/llm-key.js';
import { envMap, healthVersion, launchEnv, SharedHealthReads, type SandboxProvider, type SandboxRef, type SandboxRequest, type SandboxResync } from '../../src/sandbox/index.js';
import { archivedStatus, nextSandboxStatus, requeueAfterMs, type SandboxObserved } from './status.js';

export interface SandboxControllerOptions {
  provider: SandboxProvider;
  /** How often to look without being told (default DEFAULT_SANDBOX_RESYNC). */
  resync?: SandboxResync;
  /** Health reads shared with the Session controller (default: this controller's own). */
  healthReads?: SharedHealthReads;
  now?: () => Date;
}

type LaunchResult = { request: SandboxRequest } | { error: { reason: string; message: string } };

/** What the provider needs to start `sandbox`, or why it cannot start. */
async function launchRequest(ctx: ReconcileContext, sandbox: Sandbox, ref: SandboxRef): Promise<LaunchResult> {
  const { client } = ctx;
  const namespace = ref.namespace;
  const sessionName = sandbox.spec.sessionRef.name;
  // the Session and its Project from the caches, the three Secrets at once: one round trip on the start path
  const session = ctx.resource<Session>(SESSION).get(namespace, sessionName) ?? await client.resource<Session>(SESSION).find(namespace, sessionName);
  const project = session ? ctx.resource<Project>(PROJECT).get(namespace, session.spec.projectRef.name) ?? await client.resource<Project>(PROJECT).find(namespace, session.spec.projectRef.name) : undefined;
  const [sessionSecret, projectSecrets, llmProviders] = await Promise.all([
    client.resource<SessionSecret>(SECRET).find(namespace, sessionSecretName(sessionName)),
    project ? client.resource<ProjectSecretsSecret>(SECRET).find(namespace, projectSecretsName(project)) : undefined,
    project ? client.resource<LlmProvidersSecret>(SECRET).find(namespace, llmProvidersSecretName(project)) : undefined,
  ]);
  const tokens = sessionTokens(sessionSecret);
  if (!tokens) return { error: { reason: 'SessionSecretMissing', message: `the Secret ${sessionSecretName(sessionName)} with the session's tokens is missing; the Session controller creates it` } };
  if (!project) return { error: { reason: 'ProjectNotFound', message: `the project of session ${sessionName} does not exist` } };
  // The model gateway (docs/gateway.md): the providers' names and protocols, never their keys; the
  // session's own key is derived from its sandbox token, so a rotated token re-issues it.
  const providers = llmProviderInfos(llmProviders);
  const { env, secretEnv } = launchEnv(envMap(sandbox.spec.env), {
    ...tokens,
    projectSecrets: secretValues(projectSecrets),
    secretsRevision: secretsRevision(projectSecrets),
    // (a Session not named by a UUID, e.g. made by hand with kubectl, gets no gateway key)
    gateway: providers.length > 0 && isSessionId(sessionName)
      ? { key: llmKey(tokens.sandboxToken, project.metadata.uid!, sessionName), providers: llmProvidersEnv(providers) }
      : undefined,
  });
  return { request: { ...ref, sessionId: sessionName, projectId: project.metadata.uid!, template: sandbox.spec.template ?? {}, env, secretEnv } };
}

/**
 * Keeps a failed sandbox's log with its Session before the sandbox's remains go (docs/sessions.md
 * "A failed session's log"): the last DAEMON_LOG_TAIL_BYTES of the provider's log, with the
 * sandbox's tokens, project secrets and anything shaped like an svc token masked, in a Secret
 * the Session owns. Once: a kept log is not replaced.
 */
async function keepFailureLog(provider: SandboxProvider, sandbox: Sandbox, ref: SandboxRef, ctx: ReconcileContext): Promise<void> {
  const sessionName = sandbox.spec.sessionRef.name;
  const logs = ctx.client.resource<SessionLogSecret>(SECRET);
  if (await logs.find(ref.namespace, sessionLogSecretName(sessionName))) return;
  const session = ctx.resource<Session>(SESSION).get(ref.namespace, sessionName);
  if (!session || session.metadata.deletionTimestamp) return;
  const tail = await provider.logTail(ref, DAEMON_LOG_TAIL_BYTES, ctx.signal);
  if (tail === null) return;
  const text = logTail(redactText(redactSecrets(tail, await sandboxSecretValues(ctx.client, session))));
  try {
    await logs.create(sessionLogSecret(session, text));
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/** What the sandbox was given that is secret: its tokens and its gateway key (while its Session Secret is there) and the project's secrets. */
async function sandboxSecretValues(client: KubeClient, session: Session): Promise<string[]> {
  const namespace = session.metadata.namespace!;
  const tokens = sessionTokens(await client.resource<SessionSecret>(SECRET).find(namespace, sessionSecretName(session.metadata.name!)));
  const project = await client.resource<Project>(PROJECT).find(namespace, session.spec.projectRef.name);
  const projectSecrets = project ? await client.resource<ProjectSecretsSecret>(SECRET).find(namespace, projectSecretsName(project)) : undefined;
  const gatewayKey = tokens && project && isSessionId(session.metadata.name!) ? [llmKey(tokens.sandboxToken, project.metadata.uid!, session.metadata.name!)] : [];
  return [...(tokens ? [tokens.sandboxToken, tokens.cliToken] : []), ...gatewayKey, ...Object.values(secretValues(projectSecrets))];
}

/** How soon a stopped sandbox whose Pod still runs its termination grace is looked at again. */
export const STOPPING_RECHECK_MS = 1_000;

/** The deletion started (the finalizer's clean-up must run). */
const deletionStarted: Predicate = (obj, old) => !!obj.metadata.deletionTimestamp !== !!old.metadata.deletionTimestamp;

/**
 * I/O of one reconcile, and it acts: makes the provider match the spec (starts, restarts or
 * deletes the process or Pod), then looks at the daemon. Hence ensure, not observe: the
 * provider's own ensure is the side effect, done here where its outcome is seen.
 */
async function ensureSandbox(provider: SandboxProvider, healthReads: SharedHealthReads, sandbox: Sandbox, ctx: ReconcileContext): Promise<SandboxObserved> {
  const ref: SandboxRef = { namespace: sandbox.metadata.namespace!, name: sandbox.metadata.name!, uid: sandbox.metadata.uid! };
  // what the provider makes (a Pod), read from this controller's caches (it owns them)
  const observe = () => provider.observe(ref, ctx.signal, (type) => ctx.resource(type));
  if (sandbox.spec.desiredState === 'stopped') {
    const before = await observe();
    if (sandbox.status?.state === 'error') await keepFailureLog(provider, sandbox, ref, ctx);
    // running, or something of it left behind (a dead process's folder)
    const left = before.state !== 'absent' || before.reason !== undefined;
    if (!left) return { provider: { state: 'absent' }, health: null, action: null };
    await provider.delete(ref);
    // a Pod's deletion is only asked for: it runs its grace (the daemon's stop checkpoint) until it
    // is gone, and the sandbox is stopped only then (a process provider's delete waits for the exit)
    const after = await observe();
    return { provider: after.state === 'absent' ? { state: 'absent' } : after, health: null, action: before.state !== 'absent' ? 'deleted' : null };
  }
  let observation = await observe();
  let action: SandboxObserved['action'] = null;
  let launchError: SandboxObserved['launchError'];
  // A sandbox in error is not started again by itself (its Session has failed).
  if (observation.state === 'absent' && sandbox.status?.state !== 'error') {
    const launch = await launchRequest(ctx, sandbox, ref);
    if ('error' in launch) {
      launchError = launch.error;
    } else {
      const died = observation.reason;
      observation = await provider.ensure(launch.request, ctx.signal);
      action = died ? 'restarted' : 'started';
      if (died) observation = { ...observation, reason: died };
    }
  }
  // a daemon just (re)started shares no read of the one before it
  const health = observation.address && observation.state !== 'absent'
    ? await healthReads.read(observation.address, healthVersion(sandbox), { fresh: action !== null })
    : null;
  return { provider: observation, health, action, launchError };
}

export function sandboxController(options: SandboxControllerOptions): ControllerDefinition {
  const { provider } = options;
  const healthReads = options.healthReads ?? new SharedHealthReads();
  return objectController<Sandbox, SandboxObserved>({
    name: 'sandbox',
    for: SANDBOX,
    // a start waits on the jail, the process and the daemon's health: ten at once should not queue
    concurrency: 16,
    // its own status writes do not wake it; the daemon's state events (an annotation the API
    // writes), the end of a sandbox's process and a change of its Pod do, and it looks again now
    // and then without them
    predicates: [anyOf(generationChanged, labelsChanged, annotationsChanged, deletionStarted)],
    owns: provider.owns,
    sources: provider.onExit ? [{ subscribe: (enqueue) => provider.onExit!((ref) => enqueue({ namespace: ref.namespace, name: ref.name })) }] : [],
    // the process or Pod lives outside the cluster: removed before the Sandbox goes, which says
    // `archived` meanwhile when its Session was deleted (a stopped session's Sandbox goes by
    // retention: its Session stays the record, with the sandbox's last state)
    finalizer: {
      name: FINALIZER,
      async finalize(sandbox, ctx) {
        await provider.delete({ namespace: sandbox.metadata.namespace!, name: sandbox.metadata.name!, uid: sandbox.metadata.uid! });
        const session = ctx.resource<Session>(SESSION).get(sandbox.metadata.namespace!, sandbox.spec.sessionRef.name);
        if (session && !session.metadata.deletionTimestamp) return;
        try {
          const archived = await ctx.resource<Sandbox>(SANDBOX).replaceStatus({ ...sandbox, status: archivedStatus(sandbox, options.now?.() ?? new Date()) });
          await ctx.client.recordEvent(archived, { type: 'Normal', reason: 'Archived', message: 'its session was deleted: the sandbox is removed' });
        } catch (error) {
          if (!isNotFound(error) && !isConflict(error)) throw error;
        }
      },
    },
    observe: (sandbox, ctx) => ensureSandbox(provider, healthReads, sandbox, ctx),
    compute(sandbox, observed, now) {
      const { status, events } = nextSandboxStatus(sandbox, observed, now);
      const stopping = sandbox.spec.desiredState === 'stopped' && observed.provider.state !== 'absent';
      return { status, events, requeueAfter: stopping ? STOPPING_RECHECK_MS : requeueAfterMs(status.state, options.resync) };
    },
    now: options.now,
  });
}
