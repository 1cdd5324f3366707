import { z } from 'zod';
import { localRef, SLUG_PATTERN, statusBase, timestamp } from './common.js';
import type { Resource } from './meta.js';

/** Sandbox resource defaults for a project's sessions; the manifest's templates refine them. */
export const SandboxTemplateSchema = z
  .object({
    image: z.string().min(1).optional().describe('Container image of the sandbox.'),
    dockerfile: z.string().min(1).optional().describe('Repository-relative Dockerfile to build the sandbox image from.'),
    cpu: z.number().int().min(1).optional().describe('CPU cores.'),
    memory: z.number().int().min(1).optional().describe('Memory in MiB.'),
    disk: z.number().int().min(1).optional().describe('Disk in MiB.'),
    entrypoint: z.string().min(1).optional().describe('Command the sandbox container runs as process 1.'),
  })
  .describe('How a sandbox is built and sized.');
export type SandboxTemplate = z.infer<typeof SandboxTemplateSchema>;

export const ProjectSpecSchema = z
  .object({
    repoUrl: z.string().min(1).describe('Clone URL of the project repository (the git backend).'),
    defaultBranch: z.string().min(1).default('main').describe('Branch whose manifest drives the triggers.'),
    description: z.string().optional().describe('Free text shown to people.'),
    gitCredentialsSecretRef: localRef(
      'Secret with git credentials: keys username and password, or token.',
    ).optional(),
    secretsSecretRef: localRef(
      'Secret whose keys are the project secrets injected into sandboxes (SPEC §2.4).',
    ).optional(),
    sandbox: SandboxTemplateSchema.optional().describe('Sandbox defaults for this project.'),
    idleTimeoutSeconds: z.number().int().min(1).optional().describe('A running session whose sandbox shows no activity this long (while its engine is idle) is stopped; default: the operator setting SVC_IDLE_TIMEOUT (30 min).'),
    checkpoints: z.boolean().optional().describe('Whether sessions save their uncommitted work and the conversation as checkpoints (refs/svc/checkpoints/<session id>) and restore them when woken; default true.'),
  })
  .describe('Desired state of a Project.');
export type ProjectSpec = z.infer<typeof ProjectSpecSchema>;
/** What a writer must give (fields with defaults optional). */
export type ProjectSpecInput = z.input<typeof ProjectSpecSchema>;

export const ManifestIssueSchema = z
  .object({
    path: z.string().describe('Where in the manifest, e.g. triggers[2].cron.'),
    message: z.string().describe('What is wrong.'),
  })
  .describe('One manifest validation issue.');
export type ManifestIssue = z.infer<typeof ManifestIssueSchema>;

export const ManifestStatusSchema = z
  .object({
    file: z.string().optional().describe('svc.yaml or svc.toml; absent when the branch has neither.'),
    version: z.number().int().optional().describe('svc_version of the manifest.'),
    valid: z.boolean().describe('Whether the manifest passes validation.'),
    issues: z.array(ManifestIssueSchema).default([]).describe('Validation issues; empty when valid.'),
    summary: z.string().optional().describe('For people (the Manifest printer column): "valid (v2)", "invalid (v1)" or "missing".'),
    defaultAgent: z.string().optional().describe('default_agent of a version 2 manifest: the agent of a Session that names none.'),
  })
  .describe('The default-branch manifest as last read.');
export type ManifestStatus = z.infer<typeof ManifestStatusSchema>;

export const TriggerErrorSchema = z
  .object({
    index: z.number().int().min(0).describe('Position of the entry in the manifest triggers list.'),
    slug: z.string().optional().describe('The entry slug, when it has one.'),
    messages: z.array(z.string()).describe('Why the entry is invalid.'),
  })
  .describe('An invalid trigger entry of the trigger listing.');
export type TriggerError = z.infer<typeof TriggerErrorSchema>;

export const ProjectStatusSchema = z
  .object({
    ...statusBase,
    defaultBranchSha: z.string().optional().describe('Tip of the default branch when last read.'),
    repoUrl: z.string().optional().describe('spec.repoUrl as it may be shown: userinfo and credential query parameters redacted.'),
    manifest: ManifestStatusSchema.optional(),
    triggers: z
      .array(z.string().regex(SLUG_PATTERN))
      .optional()
      .describe('Slugs of the valid triggers of the default-branch manifest.'),
    triggerErrors: z.array(TriggerErrorSchema).optional().describe('Invalid trigger entries: the first 100 of them (triggerErrorCount counts them all).'),
    triggerErrorCount: z.number().int().min(0).optional().describe('How many invalid trigger entries in all.'),
    triggerCount: z.number().int().min(0).optional().describe('How many valid triggers (the Triggers printer column).'),
    lastRefreshTime: timestamp().optional().describe('When the repository was last read successfully.'),
    lastRefreshToken: z
      .string()
      .optional()
      .describe('Value of the svc.dev/refresh annotation the controller last honoured.'),
    lastChangeRequestNumber: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'Highest change-request number ever assigned in this project. Only ever increased, ' +
          'through /status with resourceVersion preconditions, never reused.',
      ),
  })
  .describe('Observed state of a Project.');
export type ProjectStatus = z.infer<typeof ProjectStatusSchema>;

export type Project = Resource<ProjectSpec, ProjectStatus>;

/** Project condition types. */
export const PROJECT_CONDITIONS = {
  Ready: 'Ready',
  RepositoryReachable: 'RepositoryReachable',
  ManifestValid: 'ManifestValid',
} as const;
