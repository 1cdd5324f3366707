// Pure desired-state code of the Project controller: what the Triggers should be, what the
// status and conditions say, and which Events a change deserves. No I/O here.
import {
  API_VERSION, LABEL_PROJECT, REFRESH_ANNOTATION, TRIGGER, controllerReference, getCondition, kubeTime, setCondition, triggerName,
  type Condition, type ConditionInput, type ManifestIssue, type ManifestStatus, type Project, type ProjectStatus,
  type Trigger, type TriggerEntry, type TriggerError, type TriggerSpec,
} from '../../src/resources/index.js';
import { listedIssues, listedTriggerErrors, MAX_LISTED_TRIGGER_ERRORS } from '../../src/manifest/index.js';
import { redact, type UnreachableKind } from '../../src/git/index.js';
import { jsonEqual } from '../../src/lib/json.js';
import { firstAndMore } from '../../src/lib/clip.js';
import { planChildren, planIsEmpty, type ChildPlan, type Outcome } from '../../src/runtime/index.js';
import { redactUrls, urlCarriesCredential } from '../../src/lib/redact-url.js';

export { planIsEmpty, statusChanged } from '../../src/runtime/index.js';
export { triggerEntryFromManifest } from '../../src/triggers/index.js';

/** What one read of the repository found (the reconciler's I/O result). */
export type Observation =
  | { kind: 'unreachable'; message: string; reason: 'FetchFailed' | 'CredentialsNotFound' | 'LocalRepoNotAllowed' | Exclude<UnreachableKind, 'Unreachable'> }
  | { kind: 'branch-missing'; sha: null }
  | {
    kind: 'read';
    sha: string;
    /** null when the branch has neither svc.yaml nor svc.toml. */
    manifest: { file: string; version: number | null; valid: boolean; issues: ManifestIssue[]; parsed: boolean; defaultAgent?: string } | null;
    triggers: TriggerEntry[];
    triggerErrors: TriggerError[];
  };

export interface ProjectEvent { type: 'Normal' | 'Warning'; reason: string; message: string }

const short = (sha: string) => sha.slice(0, 12);

/** The Trigger resources a project should own for `entries` (one per valid manifest entry). */
export function desiredTriggers(project: Project, entries: readonly TriggerEntry[]): Trigger[] {
  const projectName = project.metadata.name!;
  return entries.map((entry) => ({
    apiVersion: API_VERSION,
    kind: TRIGGER.kind,
    metadata: {
      name: triggerName(projectName, entry.slug),
      namespace: project.metadata.namespace,
      labels: { [LABEL_PROJECT]: projectName },
      ownerReferences: [controllerReference(project)],
    },
    spec: { ...entry, projectRef: { name: projectName } } as TriggerSpec,
  }));
}

/** Triggers to create, update (by name, to the desired spec) and delete. */
export type TriggerPlan = ChildPlan<Trigger>;

/** Makes `existing` (the Triggers the project owns) match `desired` exactly (spec and the project label). */
export function planTriggers(existing: readonly Trigger[], desired: readonly Trigger[]): TriggerPlan {
  return planChildren(existing, desired);
}

/** Whether the reconcile may change the Triggers: only after a successful read of a parsable manifest (or none). */
export function triggersAreKnown(observation: Observation): boolean {
  return observation.kind === 'read' && (observation.manifest === null || observation.manifest.parsed);
}

function condition(type: string, status: Condition['status'], reason: string, message: string, generation?: number): ConditionInput {
  return { type, status, reason, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** Trigger entries named in a condition or an Event: the first NAMED_ENTRIES, then how many more (of `total`). */
const NAMED_ENTRIES = 10;
const entryName = (e: TriggerError) => `#${e.index}${e.slug ? ` (${e.slug})` : ''}`;
function namedEntries(errors: readonly TriggerError[], total: number, name: (e: TriggerError) => string, separator: string): string {
  return firstAndMore(errors.slice(0, NAMED_ENTRIES).map(name), NAMED_ENTRIES, total, separator);
}

/** Issues that belong to trigger entries the listing already skipped (SPEC §2.5 rule 5: they do not invalidate the manifest). */
function isSkippedEntryIssue(issue: ManifestIssue, skipped: ReadonlySet<number>): boolean {
  const m = /^\/?triggers[/.[](\d+)/.exec(issue.path);
  return m !== null && skipped.has(Number(m[1]));
}

/** ManifestValid, and whether the manifest is usable (Ready may be True). */
function manifestCondition(observation: Extract<Observation, { kind: 'read' }>, branch: string, generation?: number): { condition: ConditionInput; usable: boolean } {
  const m = observation.manifest;
  const at = short(observation.sha);
  if (!m) {
    return { usable: false, condition: condition('ManifestValid', 'False', 'ManifestMissing', `branch ${branch} has neither svc.yaml nor svc.toml at ${at}; add one to declare agents and triggers`, generation) };
  }
  const skipped = new Set(observation.triggerErrors.map((e) => e.index));
  const blocking = m.issues.filter((i) => !isSkippedEntryIssue(i, skipped));
  if (blocking.length) {
    // The count is of every issue (status.manifest.issues lists the first of them), the ones that
    // make the manifest unusable first, and it matches what the message lists.
    const ordered = [...blocking, ...m.issues.filter((i) => isSkippedEntryIssue(i, skipped))];
    const shown = ordered.slice(0, 3).map((i) => `${i.path || '(top level)'}: ${i.message}`);
    if (ordered.length > shown.length) shown.push(`and ${ordered.length - shown.length} more (status.manifest.issues)`);
    const count = `${ordered.length} issue${ordered.length === 1 ? '' : 's'}`;
    return { usable: false, condition: condition('ManifestValid', 'False', 'ManifestInvalid', `${m.file} at ${at} has ${count}: ${shown.join('; ')}; fix them on ${branch}`, generation) };
  }
  const errors = observation.triggerErrors.length;
  if (errors) {
    const list = namedEntries(listedTriggerErrors(observation.triggerErrors), errors, entryName, ', ');
    const where = errors > MAX_LISTED_TRIGGER_ERRORS ? `status.triggerErrors lists the first ${MAX_LISTED_TRIGGER_ERRORS}` : 'see status.triggerErrors';
    return { usable: true, condition: condition('ManifestValid', 'False', 'InvalidTriggerEntries', `${m.file} at ${at} is valid except ${errors} trigger entr${errors === 1 ? 'y' : 'ies'} (${list}), skipped; ${where} and fix them on ${branch}`, generation) };
  }
  return { usable: true, condition: condition('ManifestValid', 'True', 'Valid', `${m.file} (version ${m.version ?? '?'}) at ${at} is valid`, generation) };
}

/** What `kubectl get projects` shows in the Manifest column: validity and version. */
export function manifestSummary(m: { valid: boolean; version: number | null }): string {
  return `${m.valid ? 'valid' : 'invalid'}${m.version !== null ? ` (v${m.version})` : ''}`;
}

/**
 * The next status for `observation`. An unreachable repository or a missing branch keeps the
 * last good manifest, triggers and SHA and only says why in the conditions.
 */
export function nextStatus(project: Project, observation: Observation, now: Date = new Date()): ProjectStatus {
  const previous: ProjectStatus = project.status ?? {};
  const generation = project.metadata.generation;
  const branch = project.spec.defaultBranch ?? 'main';
  const refresh = project.metadata.annotations?.[REFRESH_ANNOTATION];
  let conditions = previous.conditions ?? [];
  const set = (input: ConditionInput) => { conditions = setCondition(conditions, input, now); };
  const next: ProjectStatus = { ...previous };
  if (observation.kind === 'unreachable') {
    set(condition('RepositoryReachable', 'False', observation.reason, observation.message, generation));
    if (!getCondition(conditions, 'ManifestValid')) set(condition('ManifestValid', 'Unknown', 'NotRead', 'the repository has not been read yet', generation));
    const kept = previous.defaultBranchSha ? 'the last known manifest and triggers are kept' : 'nothing was read from it yet';
    set(condition('Ready', 'False', 'RepositoryUnreachable', `${observation.message}; ${kept}`, generation));
  } else if (observation.kind === 'branch-missing') {
    set(condition('RepositoryReachable', 'True', 'Fetched', `fetched ${redact(project.spec.repoUrl)}`, generation));
    if (!getCondition(conditions, 'ManifestValid')) set(condition('ManifestValid', 'Unknown', 'NotRead', `branch ${branch} does not exist yet`, generation));
    set(condition('Ready', 'False', 'DefaultBranchNotFound', `the repository has no branch ${branch}; push it or change spec.defaultBranch (triggers are kept)`, generation));
  } else {
    set(condition('RepositoryReachable', 'True', 'Fetched', `fetched ${redact(project.spec.repoUrl)}`, generation));
    const manifest = manifestCondition(observation, branch, generation);
    set(manifest.condition);
    next.defaultBranchSha = observation.sha;
    const m = observation.manifest;
    next.manifest = m
      ? { file: m.file, ...(m.version !== null ? { version: m.version } : {}), valid: m.valid, issues: listedIssues(m.issues), summary: manifestSummary(m), ...(m.defaultAgent ? { defaultAgent: m.defaultAgent } : {}) } as ManifestStatus
      : { valid: false, issues: [], summary: 'missing' };
    if (triggersAreKnown(observation)) {
      next.triggers = observation.triggers.map((t) => t.slug).sort();
      next.triggerErrors = listedTriggerErrors(observation.triggerErrors);
      next.triggerErrorCount = observation.triggerErrors.length;
      next.triggerCount = next.triggers.length;
    }
    const count = next.triggers?.length ?? 0;
    if (manifest.usable) {
      set(condition('Ready', 'True', 'Synced', `${count} trigger(s) synced from ${m!.file} at ${short(observation.sha)} of ${branch}`, generation));
    } else {
      set(condition('Ready', 'False', manifest.condition.reason, manifest.condition.message, generation));
    }
  }
  next.repoUrl = redactUrls(project.spec.repoUrl); // what `kubectl get projects -o wide` shows
  // A credential in spec.repoUrl is used, but said loudly: it belongs in the credentials Secret.
  if (urlCarriesCredential(project.spec.repoUrl)) {
    set(condition('RepoUrlCredentialFree', 'False', 'CredentialInRepoUrl', `spec.repoUrl carries a credential (userinfo or a token query parameter): move it into a Secret named by spec.gitCredentialsSecretRef and remove it from the URL`, generation));
  } else if (getCondition(conditions, 'RepoUrlCredentialFree')) {
    set(condition('RepoUrlCredentialFree', 'True', 'NoCredentialInRepoUrl', 'spec.repoUrl carries no credential', generation));
  }
  next.conditions = conditions;
  if (generation !== undefined) next.observedGeneration = generation;
  if (refresh !== undefined) next.lastRefreshToken = refresh;
  // Stamped only when something else changed, so a reconcile that finds nothing new writes nothing.
  const { lastRefreshTime: _ignored, ...rest } = next;
  const { lastRefreshTime: _previous, ...previousRest } = previous;
  if (!jsonEqual(rest, previousRest) && observation.kind === 'read') next.lastRefreshTime = kubeTime(now);
  return next;
}

/** Events worth a line in `kubectl describe project` for the change from `before` to `after`. */
export function eventsFor(before: ProjectStatus | undefined, after: ProjectStatus, plan: TriggerPlan | null): ProjectEvent[] {
  const events: ProjectEvent[] = [];
  const was = (type: string) => getCondition(before?.conditions, type);
  const now = (type: string) => getCondition(after.conditions, type);
  const changed = (type: string) => was(type)?.status !== now(type)?.status || was(type)?.reason !== now(type)?.reason || was(type)?.message !== now(type)?.message;

  const urlCredential = now('RepoUrlCredentialFree');
  if (urlCredential?.status === 'False' && changed('RepoUrlCredentialFree')) events.push({ type: 'Warning', reason: urlCredential.reason, message: urlCredential.message });
  const reach = now('RepositoryReachable');
  if (reach?.status === 'False' && changed('RepositoryReachable')) events.push({ type: 'Warning', reason: 'RepositoryUnreachable', message: reach.message });
  if (reach?.status === 'True' && was('RepositoryReachable')?.status === 'False') events.push({ type: 'Normal', reason: 'RepositoryReachable', message: 'the repository is reachable again' });
  if (after.defaultBranchSha && after.defaultBranchSha !== before?.defaultBranchSha) {
    events.push({ type: 'Normal', reason: 'DefaultBranchRead', message: `read the default branch at ${short(after.defaultBranchSha)}` });
  }
  const manifest = now('ManifestValid');
  if (manifest?.status === 'False' && manifest.reason !== 'InvalidTriggerEntries' && changed('ManifestValid')) events.push({ type: 'Warning', reason: manifest.reason, message: manifest.message });
  if (manifest?.status === 'True' && was('ManifestValid')?.status === 'False') events.push({ type: 'Normal', reason: 'ManifestValid', message: manifest.message });
  const errorCount = (status: ProjectStatus | undefined) => status?.triggerErrorCount ?? status?.triggerErrors?.length ?? 0;
  if (after.triggerErrors?.length && (!jsonEqual(before?.triggerErrors ?? [], after.triggerErrors) || errorCount(before) !== errorCount(after))) {
    const list = namedEntries(after.triggerErrors, errorCount(after), (e) => `${entryName(e)}: ${e.messages.join(', ')}`, '; ');
    events.push({ type: 'Warning', reason: 'InvalidTriggers', message: `invalid trigger entries skipped: ${list}` });
  }
  if (plan && !planIsEmpty(plan)) {
    const parts = [
      plan.create.length ? `created ${plan.create.map((t) => t.metadata.name).join(', ')}` : '',
      plan.update.length ? `updated ${plan.update.map((t) => t.metadata.name).join(', ')}` : '',
      plan.delete.length ? `deleted ${plan.delete.map((t) => t.metadata.name).join(', ')}` : '',
    ].filter(Boolean);
    events.push({ type: 'Normal', reason: 'TriggersSynced', message: parts.join('; ') });
  }
  return events;
}

/** What the Project controller observes: one read of the repository and the Triggers it owns now. */
export interface ProjectObservation {
  repository: Observation;
  ownedTriggers: Trigger[];
}

/**
 * The Project kind's pure reconcile: Triggers to apply (only after a successful read of a
 * parsable manifest, or none), the status, the Events, and the next re-read after `resyncMs`.
 */
export function projectOutcome(project: Project, observed: ProjectObservation, now: Date, resyncMs: number): Outcome<ProjectStatus> & { plan: TriggerPlan | null } {
  const observation = observed.repository;
  const plan = triggersAreKnown(observation) && observation.kind === 'read'
    ? planTriggers(observed.ownedTriggers, desiredTriggers(project, observation.triggers))
    : null;
  const status = nextStatus(project, observation, now);
  return {
    status,
    events: eventsFor(project.status, status, plan),
    requeueAfter: resyncMs,
    children: plan ? [{ type: TRIGGER, plan }] : [],
    plan,
  };
}
