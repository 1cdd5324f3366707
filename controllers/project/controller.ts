// The Project controller: the Project kind on the runtime's object reconciler. Reconciles on
// create, spec (generation), label and annotation changes (`svc.dev/refresh` asks for a re-read),
// changes of the Triggers it owns, and every resync interval; its own status writes do not wake it.
import {
  annotationsChanged, anyOf, generationChanged, labelsChanged, objectController, type ControllerDefinition,
} from '../../src/runtime/index.js';
import { PROJECT, TRIGGER, type Project } from '../../src/resources/index.js';
import { projectOutcome, type ProjectObservation } from './desired.js';
import { kubeProjectWorld } from './kube-cluster.js';
import { observeProject } from './reconciler.js';
import { rememberedReads, repositoryReader } from './repository.js';

export interface ProjectControllerOptions {
  /** Directory of the bare mirrors. */
  mirrorDir: string;
  /** Re-read interval of each project's default branch (default 30 s). */
  resyncMs?: number;
  /** Projects reconciled at once (default 8: fetches wait on the host and on git processes). */
  concurrency?: number;
}

export function projectController(options: ProjectControllerOptions): ControllerDefinition {
  const resyncMs = options.resyncMs ?? 30_000;
  // the Triggers it creates (and their status writes) wake it again: those reconciles reuse the read
  const readRepository = rememberedReads(repositoryReader({ mirrorDir: options.mirrorDir }), { maxAgeMs: resyncMs });
  return objectController<Project, ProjectObservation>({
    name: 'project',
    for: PROJECT,
    owns: [TRIGGER],
    concurrency: options.concurrency ?? 8,
    predicates: [anyOf(generationChanged, labelsChanged, annotationsChanged)],
    observe: (project, ctx) => observeProject(project, kubeProjectWorld(ctx), readRepository),
    compute: (project, observed, now) => projectOutcome(project, observed, now, resyncMs),
  });
}
