/** svc custom resources: zod schemas, types, GVKs, condition helpers and child names. */
import type { z } from 'zod';
import { ChangeRequestSpecSchema, ChangeRequestStatusSchema } from './changerequest.js';
import { CHANGE_REQUEST, PROJECT, SANDBOX, SESSION, TRIGGER, TRIGGER_FIRE, type ResourceType } from './constants.js';
import type { KubeObject } from './meta.js';
import { ProjectSpecSchema, ProjectStatusSchema } from './project.js';
import { SandboxSpecSchema, SandboxStatusSchema } from './sandbox.js';
import { SessionSpecSchema, SessionStatusSchema } from './session.js';
import { TriggerFireSpecSchema, TriggerFireStatusSchema } from './triggerfire.js';
import { TriggerSpecSchema, TriggerStatusSchema } from './trigger.js';

export * from './changerequest.js';
export * from './common.js';
export * from './conditions.js';
export * from './constants.js';
export * from './delivery-ledger.js';
export * from './meta.js';
export * from './llm-providers.js';
export * from './llm-usage.js';
export * from './names.js';
export * from './project.js';
export * from './project-secrets.js';
export * from './sandbox.js';
export * from './session.js';
export * from './session-cap.js';
export * from './session-credentials.js';
export * from './session-prompts.js';
export * from './session-log.js';
export * from './session-secret.js';
export * from './trigger.js';
export * from './triggerfire.js';

/** One svc kind: its REST identity and the schemas of its spec and status. */
export interface KindDefinition {
  type: ResourceType;
  spec: z.ZodType;
  status: z.ZodType;
  description: string;
}

export const KINDS: readonly KindDefinition[] = [
  { type: PROJECT, spec: ProjectSpecSchema, status: ProjectStatusSchema, description: 'A git repository hosted for AI coding agents; its default-branch svc.yaml drives its triggers.' },
  { type: SESSION, spec: SessionSpecSchema, status: SessionStatusSchema, description: 'An agent working on its own branch of a project, in a sandbox.' },
  { type: SANDBOX, spec: SandboxSpecSchema, status: SandboxStatusSchema, description: 'The environment (a Pod or a local process) a session runs in.' },
  { type: TRIGGER, spec: TriggerSpecSchema, status: TriggerStatusSchema, description: 'A cron or webhook trigger of a project manifest that starts sessions.' },
  { type: TRIGGER_FIRE, spec: TriggerFireSpecSchema, status: TriggerFireStatusSchema, description: 'One fire of a trigger; it creates a session.' },
  { type: CHANGE_REQUEST, spec: ChangeRequestSpecSchema, status: ChangeRequestStatusSchema, description: 'A request to merge a head branch into a base branch of a project.' },
];

export function kindDefinition(kind: string): KindDefinition | undefined {
  return KINDS.find((k) => k.type.kind === kind);
}

/**
 * The object with spec and status defaults applied (what an API server with CRD defaulting
 * would return). Parts that do not pass their schema are left as they are.
 */
export function withDefaults<T extends KubeObject>(obj: T): T {
  const def = obj.kind ? kindDefinition(obj.kind) : undefined;
  if (!def) return obj;
  const out: KubeObject = { ...obj };
  for (const part of ['spec', 'status'] as const) {
    if (obj[part] === undefined) continue;
    const parsed = def[part].safeParse(obj[part]);
    if (parsed.success) out[part] = parsed.data;
  }
  return out as T;
}
