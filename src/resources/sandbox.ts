import { z } from 'zod';
import { ENV_NAME_PATTERN, localRef, statusBase, timestamp } from './common.js';
import type { Resource } from './meta.js';
import { SandboxTemplateSchema } from './project.js';
import { DesiredStateSchema } from './session.js';

/** SPEC §3.3 sandbox states. */
export const SANDBOX_STATES = ['provisioning', 'active', 'stopped', 'error', 'archived'] as const;
export const SandboxStateSchema = z.enum(SANDBOX_STATES);
export type SandboxState = z.infer<typeof SandboxStateSchema>;

export const SANDBOX_PROVIDERS = ['kubernetes', 'process'] as const;
export const SandboxProviderSchema = z.enum(SANDBOX_PROVIDERS);
export type SandboxProvider = z.infer<typeof SandboxProviderSchema>;

export const EnvVarSchema = z
  .object({
    name: z.string().regex(ENV_NAME_PATTERN).describe('Variable name.'),
    value: z.string().describe('Plain value; never a secret (secrets come from Secrets).'),
  })
  .describe('A plain environment variable.');
export type EnvVar = z.infer<typeof EnvVarSchema>;

export const SandboxSpecSchema = z
  .object({
    sessionRef: localRef('The Session this sandbox runs.'),
    provider: SandboxProviderSchema.describe('kubernetes (a Pod) or process (a local child process).'),
    template: SandboxTemplateSchema.default({}),
    env: z.array(EnvVarSchema).default([]).describe('Non-secret environment of the sandbox (SPEC §2.6).'),
    desiredState: DesiredStateSchema.default('running').describe('running or stopped.'),
  })
  .describe('Desired state of a Sandbox. Named after its Session.');
export type SandboxSpec = z.infer<typeof SandboxSpecSchema>;
/** What a writer must give (fields with defaults optional). */
export type SandboxSpecInput = z.input<typeof SandboxSpecSchema>;

export const SandboxStatusSchema = z
  .object({
    ...statusBase,
    state: SandboxStateSchema.optional().describe('SPEC §3.3 state.'),
    podName: z.string().optional().describe('The Pod (kubernetes provider).'),
    address: z.string().optional().describe('host:port of the daemon (SPEC §4.5).'),
    lastActivityTime: timestamp().optional().describe('Last activity seen, for the idle sweep.'),
    engineRestarts: z.number().int().min(0).optional().describe('How often the daemon restarted the engine.'),
    reason: z.string().optional().describe('Why the sandbox is in error or stopped.'),
  })
  .describe('Observed state of a Sandbox.');
export type SandboxStatus = z.infer<typeof SandboxStatusSchema>;

export type Sandbox = Resource<SandboxSpec, SandboxStatus>;

/**
 * Written by the API when the sandbox's daemon says its state changed (`<RFC 3339 time> <kind>`,
 * src/lib/daemon-events.ts): the Sandbox and Session controllers wake on it and read the daemon's
 * health themselves. Nothing else about the Sandbox is the API's to write.
 */
export const DAEMON_EVENT_ANNOTATION = 'svc.dev/daemon-event';

/**
 * Written on the Session by the API's git gateway when a push of the session moved its checkpoint
 * ref (`<RFC 3339 time> <sha>`): the checkpoint of a stop, pushed while the sandbox goes, reaches
 * the Session's status this way (its health is no longer read then). The Session controller folds
 * it into status.checkpoint when it is newer.
 */
export const CHECKPOINT_PUSHED_ANNOTATION = 'svc.dev/checkpoint-pushed';

/** The checkpoint an annotation value says was pushed, or null. */
export function parseCheckpointPushed(value: string | undefined): { sha: string; at: string } | null {
  const m = /^(\S+) ([0-9a-f]{40,64})$/.exec(value ?? '');
  return m && !Number.isNaN(Date.parse(m[1]!)) ? { at: m[1]!, sha: m[2]! } : null;
}
