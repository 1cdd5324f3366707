// The one place a new Session is built: by the session route (an interactive start) and by the
// TriggerFire controller (a fresh fire). Owned by its Project (garbage collected with it) and
// labelled with it; metadata.name is the session id and its branch.
import {
  API_VERSION, BASE_SHA_ANNOTATION, LABEL_PROJECT, LABEL_TRIGGER, SESSION, controllerReference,
  type Project, type Session,
} from '../resources/index.js';

/** Annotation on a Session naming the TriggerFire that created it. */
export const FIRE_ANNOTATION = 'svc.dev/trigger-fire';

export interface NewSessionInput {
  /** The session id (a UUID): the object name and the branch. */
  id: string;
  agent: string;
  /** Ref the branch is cut from (default: the project's default branch). */
  baseRef?: string;
  /** The base ref's tip as the starter read it (BASE_SHA_ANNOTATION). */
  baseSha?: string;
  model?: string;
  initialPrompt?: string;
  /** User id of who started it (a person, a token, a manual fire's actor). */
  createdBy?: string;
  /** The trigger and fire that started it. */
  fired?: { trigger: string; fire: string };
}

export function newSession(project: Project, input: NewSessionInput): Session {
  const fired = input.fired;
  const annotations = { ...(fired ? { [FIRE_ANNOTATION]: fired.fire } : {}), ...(input.baseSha ? { [BASE_SHA_ANNOTATION]: input.baseSha } : {}) };
  return {
    apiVersion: API_VERSION,
    kind: SESSION.kind,
    metadata: {
      name: input.id,
      namespace: project.metadata.namespace,
      labels: { [LABEL_PROJECT]: project.metadata.name!, ...(fired ? { [LABEL_TRIGGER]: fired.trigger } : {}) },
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ownerReferences: [controllerReference(project)],
    },
    spec: {
      projectRef: { name: project.metadata.name! },
      agent: input.agent,
      baseRef: input.baseRef ?? (project.spec.defaultBranch || 'main'),
      ...(input.model !== undefined ? { model: input.model } : {}),
      ...(input.initialPrompt !== undefined ? { initialPrompt: input.initialPrompt } : {}),
      desiredState: 'running',
      ...(fired ? { triggerRef: { name: fired.trigger } } : {}),
      ...(input.createdBy ? { createdBy: input.createdBy } : {}),
    },
  };
}
