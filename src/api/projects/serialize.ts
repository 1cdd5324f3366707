// The REST shapes of projects and their triggers (docs/api.md): snake_case, from the resources.
import { redactUrls } from '../../lib/redact-url.js';
import { promptTagWarnings } from '../../triggers/prompt-variables.js';
import type { SerializedProject, SerializedTrigger } from '../../lib/rest-shapes.js';
import type { Project, Trigger } from '../../resources/index.js';

/** A Trigger as the REST API shows it: the normalized manifest entry (snake_case) and its runtime state. */
export function serializeTrigger(trigger: Trigger): SerializedTrigger {
  const s = trigger.spec;
  const out: SerializedTrigger = {
    slug: s.slug, type: s.type, name: s.name, prompt: s.prompt, agent: s.agent,
    session_mode: s.sessionMode, enabled: s.enabled, timezone: s.timezone,
  };
  if (s.model !== undefined) out.model = s.model;
  if (s.cron !== undefined) out.cron = s.cron;
  if (s.runAt !== undefined) out.run_at = s.runAt;
  if (s.secretEnv !== undefined) out.secret_env = s.secretEnv;
  out.last_fired_at = trigger.status?.lastFiredAt ?? null;
  out.next_fire_at = trigger.status?.nextFireAt ?? null;
  out.dormant = trigger.status?.dormant ?? false;
  out.paused = trigger.status?.paused ?? false;
  // why, in the controller's words (the Paused condition): the failures and the last one's cause
  out.paused_reason = out.paused ? trigger.status?.conditions?.find((c) => c.type === 'Paused' && c.status === 'True')?.message ?? null : null;
  out.consecutive_failures = trigger.status?.consecutiveFailures ?? 0;
  out.last_session_id = trigger.status?.lastSessionName ?? null;
  // tags that render empty at every fire (`{{ payload.ref }}` for `{{ body.ref }}`): where people
  // look, not only in `svc manifest validate`; a warning, never an error (SPEC §6)
  out.prompt_warnings = promptTagWarnings(s);
  return out;
}

/** A Project as the REST API shows it, with its triggers (already serialized) sorted by slug. */
export function serializeProject(project: Project, triggers: readonly SerializedTrigger[] = []): SerializedProject {
  const status = project.status ?? {};
  const manifest = status.manifest;
  return {
    id: project.metadata.uid ?? '',
    name: project.metadata.name ?? '',
    namespace: project.metadata.namespace ?? '',
    // the spec keeps a credential someone put in the URL; no REST reader sees it
    repo_url: redactUrls(project.spec.repoUrl),
    default_branch: project.spec.defaultBranch ?? 'main',
    description: project.spec.description ?? null,
    credentials_secret: project.spec.gitCredentialsSecretRef?.name ?? null,
    default_branch_sha: status.defaultBranchSha ?? null,
    manifest: manifest
      ? { file: manifest.file ?? null, version: manifest.version ?? null, valid: manifest.valid, issues: manifest.issues ?? [] }
      : null,
    triggers: [...triggers].sort((a, b) => a.slug.localeCompare(b.slug)),
    trigger_errors: status.triggerErrors ?? [],
    conditions: status.conditions ?? [],
    created_at: project.metadata.creationTimestamp ?? null,
  };
}
