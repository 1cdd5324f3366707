// The Project controller: the Project kind on the runtime's object reconciler. Reconciles on
// create, spec (generation), label and annotation changes (`svc.dev/refresh` asks for a re-read),
// changes of the Triggers it owns, and every resync interval; its own status writes do not wake it.
// observe (observe.ts: credentials, one read of the repository, the owned Triggers) ->
// projectOutcome (desired.ts, pure: the desired Triggers as children, status, Events).
// A Project being deleted waits for its Sessions: their finalizers remove their refs from the
// project's repository, which needs the Project and its credentials (docs/sessions.md).
import {
  annotationsChanged, anyOf, generationChanged, labelsChanged, objectController, type ControllerDefinition, type ObjectReconciler, type ReconcileContext,
} from '../../src/runtime/index.js';
import { PROJECT, SESSION, TRIGGER, type Project, type Session } from '../../src/resources/index.js';
import { projectOutcome, type ProjectObservation } from './desired.js';
import { kubeProjectWorld, observeProject, type ProjectWorld } from './observe.js';
import { rememberedReads, repositoryReader, type ReadRepository } from './repository.js';

/** Keeps a deleted Project until its Sessions are gone (their cleanup outside the cluster reads it). */
export const PROJECT_SESSIONS_FINALIZER = 'svc.dev/sessions';
/** How often a Project being deleted looks again whether its Sessions are gone. */
const SESSIONS_GONE_POLL_MS = 1000;

/**
 * Deletes the Project's Sessions itself, rather than leaving them to the garbage collector after
 * the Project is gone, and waits until they are: meanwhile the Project, its credentials and
 * its change requests are there for their finalizers.
 */
async function deleteSessionsFirst(project: Project, ctx: ReconcileContext): Promise<void | { requeueAfter: number }> {
  const sessions = ctx.resource<Session>(SESSION);
  const left = sessions.ownedBy(project);
  if (!left.length) return;
  await Promise.all(left.filter((s) => !s.metadata.deletionTimestamp).map((s) => sessions.delete(s)));
  return { requeueAfter: SESSIONS_GONE_POLL_MS };
}

export interface ProjectControllerOptions {
  /** Directory of the bare mirrors. */
  mirrorDir: string;
  /** Re-read interval of each project's default branch (default 30 s). */
  resyncMs?: number;
  /** Projects reconciled at once (default 8: fetches wait on the host and on git processes). */
  concurrency?: number;
  /** Where observe reads (default: the manager's caches and client). */
  world?: (ctx: ReconcileContext) => ProjectWorld;
  /** How the repository is read (default: a bare mirror in mirrorDir). */
  readRepository?: ReadRepository;
  now?: () => Date;
}

/** The Project kind: what objectController runs, and what a test runs over memory (reconcileObject). */
export function projectKind(options: ProjectControllerOptions): ObjectReconciler<Project, ProjectObservation> {
  const resyncMs = options.resyncMs ?? 30_000;
  // the Triggers it creates (and their status writes) wake it again: those reconciles reuse the read
  const readRepository = options.readRepository ?? rememberedReads(repositoryReader({ mirrorDir: options.mirrorDir }), { maxAgeMs: resyncMs });
  const world = options.world ?? kubeProjectWorld;
  return {
    name: 'project',
    for: PROJECT,
    owns: [TRIGGER],
    concurrency: options.concurrency ?? 8,
    predicates: [anyOf(generationChanged, labelsChanged, annotationsChanged)],
    finalizer: { name: PROJECT_SESSIONS_FINALIZER, finalize: deleteSessionsFirst },
    now: options.now,
    observe: (project, ctx) => observeProject(project, world(ctx), readRepository),
    compute: (project, observed, now) => projectOutcome(project, observed, now, resyncMs),
  };
}

export function projectController(options: ProjectControllerOptions): ControllerDefinition {
  return objectController(projectKind(options));
}
