// The Sandbox controller: makes a sandbox (through the provider) match its Sandbox resource and
// writes the Sandbox status (its only writer). The tokens and the project's secrets are read
// here, at launch, from the Session Secret and the project secrets Secret, and handed to the
// provider: they never enter a resource. A finalizer lets the provider remove the process or
// Pod when the Sandbox goes (with its Session); the status says `archived` meanwhile.
import { isConflict, isNotFound, type KubeClient } from '../../src/kube/index.js';
import type { ControllerDefinition } from '../../src/runtime/index.js';
import { updateStatus } from '../../src/runtime/status.js';
import {
  FINALIZER, PROJECT, SANDBOX, SECRET, SESSION, projectSecretsName, secretValues, secretsRevision, sessionSecretName, sessionTokens,
  type Project, type ProjectSecretsSecret, type Sandbox, type Session, type SessionSecret,
} from '../../src/resources/index.js';
import { envMap, launchEnv, readDaemonHealth, type SandboxProvider, type SandboxRef, type SandboxRequest } from '../../src/sandbox/index.js';
import { archivedStatus, nextSandboxStatus, requeueAfterMs, type SandboxObserved } from './desired.js';

export interface SandboxControllerOptions {
  provider: SandboxProvider;
  now?: () => Date;
}

type LaunchResult = { request: SandboxRequest } | { error: { reason: string; message: string } };

/** What the provider needs to start `sandbox`, or why it cannot start. */
async function launchRequest(client: KubeClient, sandbox: Sandbox, ref: SandboxRef): Promise<LaunchResult> {
  const namespace = ref.namespace;
  const sessionName = sandbox.spec.sessionRef.name;
  const secrets = client.resource<SessionSecret>(SECRET);
  const tokens = sessionTokens(await secrets.find(namespace, sessionSecretName(sessionName)));
  if (!tokens) return { error: { reason: 'SessionSecretMissing', message: `the Secret ${sessionSecretName(sessionName)} with the session's tokens is missing; the Session controller creates it` } };
  const session = await client.resource<Session>(SESSION).find(namespace, sessionName);
  const project = session ? await client.resource<Project>(PROJECT).find(namespace, session.spec.projectRef.name) : undefined;
  if (!project) return { error: { reason: 'ProjectNotFound', message: `the project of session ${sessionName} does not exist` } };
  const projectSecrets = await client.resource<ProjectSecretsSecret>(SECRET).find(namespace, projectSecretsName(project));
  const { env, secretEnv } = launchEnv(envMap(sandbox.spec.env), {
    ...tokens,
    projectSecrets: secretValues(projectSecrets),
    secretsRevision: secretsRevision(projectSecrets),
  });
  return { request: { ...ref, sessionId: sessionName, projectId: project.metadata.uid!, template: sandbox.spec.template ?? {}, env, secretEnv } };
}

export function sandboxController(options: SandboxControllerOptions): ControllerDefinition {
  const { provider } = options;
  const now = options.now ?? (() => new Date());
  return {
    name: 'sandbox',
    for: SANDBOX,
    concurrency: 4,
    async reconcile(key, ctx) {
      const sandboxes = ctx.client.resource<Sandbox>(SANDBOX);
      const cached = ctx.informer<Sandbox>(SANDBOX).get(key.namespace, key.name);
      if (!cached) return;
      const sandbox = sandboxes.decode(cached);
      const ref: SandboxRef = { namespace: key.namespace, name: key.name, uid: sandbox.metadata.uid! };
      const finalizers = sandbox.metadata.finalizers ?? [];

      if (sandbox.metadata.deletionTimestamp) {
        if (!finalizers.includes(FINALIZER)) return;
        await provider.delete(ref);
        try {
          const archived = await updateStatus(sandboxes, sandbox, archivedStatus(sandbox, now()));
          await ctx.client.recordEvent(archived, { type: 'Normal', reason: 'Archived', message: 'its session was deleted: the sandbox is removed' });
          await sandboxes.mergePatch(key.namespace, key.name, { metadata: { resourceVersion: archived.metadata.resourceVersion, finalizers: finalizers.filter((f) => f !== FINALIZER) } });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        return;
      }
      if (!finalizers.includes(FINALIZER)) {
        await sandboxes.mergePatch(key.namespace, key.name, { metadata: { resourceVersion: sandbox.metadata.resourceVersion, finalizers: [...finalizers, FINALIZER] } });
        return; // the update requeues this key
      }

      let seen: SandboxObserved;
      if (sandbox.spec.desiredState === 'stopped') {
        const before = await provider.observe(ref);
        if (before.state !== 'absent') await provider.delete(ref);
        seen = { provider: { state: 'absent' }, health: null, action: before.state !== 'absent' ? 'deleted' : null };
      } else {
        let observation = await provider.observe(ref);
        let action: SandboxObserved['action'] = null;
        let launchError: SandboxObserved['launchError'];
        if (observation.state === 'absent' && sandbox.status?.state !== 'error') {
          const launch = await launchRequest(ctx.client, sandbox, ref);
          if ('error' in launch) {
            launchError = launch.error;
          } else {
            const died = observation.reason;
            observation = await provider.ensure(launch.request);
            action = died ? 'restarted' : 'started';
            if (died) observation = { ...observation, reason: died };
          }
        }
        const health = observation.address && observation.state !== 'absent' ? await readDaemonHealth(observation.address) : null;
        seen = { provider: observation, health, action, launchError };
      }
      const outcome = nextSandboxStatus(sandbox, seen, now());
      let written = sandbox;
      try {
        written = await updateStatus(sandboxes, sandbox, outcome.status);
      } catch (error) {
        if (isConflict(error)) return { requeueAfter: 200 };
        throw error;
      }
      for (const event of outcome.events) await ctx.client.recordEvent(written, event);
      const after = requeueAfterMs(outcome.status.state);
      return after ? { requeueAfter: after } : undefined;
    },
  };
}
