// What one reconcile of a Session looks at (I/O, reads only): its Project and Sandbox from the
// caches, which of its Secrets exist (live reads, only while a sandbox is about to start or its
// credentials may be spent), and the daemon's health while its sandbox runs. The result is SessionFacts (decide.ts).
import { lookupName } from '../../src/lib/api-tokens.js';
import type { ReconcileContext } from '../../src/runtime/index.js';
import {
  PROJECT, SANDBOX, SECRET, sessionSecretName, sessionTokens,
  type Project, type Sandbox, type Session, type SessionSecret,
} from '../../src/resources/index.js';
import { healthVersion, type SharedHealthReads } from '../../src/sandbox/index.js';
import { readsSecrets, type SessionFacts } from './decide.js';

export interface ObserveSettings {
  /** Namespace of the API token Secrets (where the CLI token lives). */
  tokenNamespace: string;
  /** Idle timeout when the Project sets none. */
  idleTimeoutMs: number;
  /** The daemon's health, read once for reconciles of both controllers close together. */
  healthReads: SharedHealthReads;
}

export async function observeSession(session: Session, ctx: ReconcileContext, settings: ObserveSettings): Promise<SessionFacts> {
  const namespace = session.metadata.namespace!;
  const project = ctx.resource<Project>(PROJECT).get(namespace, session.spec.projectRef.name) ?? null;
  const sandbox = ctx.resource<Sandbox>(SANDBOX).get(namespace, session.metadata.name!) ?? null;
  let secrets: SessionFacts['secrets'] = null;
  if (readsSecrets(session, sandbox)) {
    const secretsClient = ctx.client.resource<SessionSecret>(SECRET);
    const tokens = sessionTokens(await secretsClient.find(namespace, sessionSecretName(session.metadata.name!)));
    const cliName = tokens ? lookupName(tokens.cliToken) : null;
    const cli = cliName ? await secretsClient.find(settings.tokenNamespace, cliName) : undefined;
    secrets = { session: tokens !== null, cli: cli !== undefined };
  }
  const address = sandbox?.status?.address;
  // also while provisioning: a stalled engine's restart and the boot timeline happen then
  const started = (sandbox?.status?.state === 'active' || sandbox?.status?.state === 'provisioning') && address && sandbox.spec.desiredState === 'running';
  return {
    project,
    sandbox,
    secrets,
    health: started ? await settings.healthReads.read(address, healthVersion(sandbox)) : null,
    idleTimeoutMs: project?.spec.idleTimeoutSeconds ? project.spec.idleTimeoutSeconds * 1000 : settings.idleTimeoutMs,
    branch: null,
    delivered: null,
  };
}
