// Actions of `svc manifest validate`, `svc triggers ls` and `svc ship --dry-run`, loaded lazily.
import { statSync } from 'node:fs';
import path from 'node:path';
import { config as zodConfig } from 'zod';
import {
  type AgentFileIssue, type ManifestCheck, type ManifestIssue, type NormalizedTrigger,
  checkAgentFiles, checkManifestFile, findManifestFile, listTriggers,
} from '../manifest/index.js';
import { nextFire } from '../triggers/cron.js';
import { promptVariableWarnings } from '../triggers/prompt-variables.js';
import { CliError, EXIT, formatTable, printJson, printLines, setExitCode } from './output.js';

// One-shot process: zod's generated parsers cost more to compile than they save here.
zodConfig({ jitless: true });

interface Target {
  /** the manifest path as the user would write it */
  file: string;
  /** the repository directory, when PATH was a directory */
  repoDir?: string;
}

/** PATH -> the manifest file (directory: svc.yaml, then svc.toml). Null when a directory has none and `optional`; else `hint` follows the error. */
function resolveTarget(pathArg: string, optional = false, hint = ''): Target | null {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(pathArg).isDirectory();
  } catch (err) {
    throw new CliError(`${pathArg}: cannot read: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
  }
  if (!isDirectory) return { file: pathArg };
  const name = findManifestFile(pathArg);
  if (!name) {
    if (optional) return null;
    throw new CliError(`${pathArg}: no svc.yaml or svc.toml in this directory${hint}`);
  }
  return { file: path.join(pathArg, name), repoDir: pathArg };
}

function check(target: Target): ManifestCheck {
  try {
    return checkManifestFile(target.file);
  } catch (err) {
    throw new CliError((err as Error).message.startsWith(target.file) ? (err as Error).message : `${target.file}: cannot read: ${(err as Error).message}`);
  }
}

const issueLine = (file: string, issue: ManifestIssue) => `${file}${issue.path === '' ? '' : ` ${issue.path}`}: ${issue.message}`;

/** Allowed, but likely slips: unknown keys that look like known ones, prompt tags that name no variable. */
function manifestWarnings(result: ManifestCheck): ManifestIssue[] {
  return result.document === undefined ? result.warnings : [...result.warnings, ...promptVariableWarnings(listTriggers(result).triggers, result.document)];
}

function triggerCount(result: ManifestCheck): string {
  const doc = result.document as { triggers?: unknown } | undefined;
  const count = Array.isArray(doc?.triggers) ? doc.triggers.length : 0;
  return `${count} trigger${count === 1 ? '' : 's'}`;
}

export function validateCommand(pathArg: string, options: { json?: boolean }): void {
  const target = resolveTarget(pathArg)!;
  const result = check(target);
  const agentIssues: AgentFileIssue[] = target.repoDir === undefined ? [] : checkAgentFiles(target.repoDir, result.document)
    .map((issue) => ({ ...issue, file: path.join(target.repoDir!, issue.file) }));
  const valid = result.valid && agentIssues.length === 0;
  const found = manifestWarnings(result);
  const warnings = found.map((i) => `warning: ${issueLine(target.file, i)}`);
  if (options.json) {
    // warnings only when there are some: the document's shape stays what scripts already read
    printJson({ valid, file: target.file, version: result.version, issues: result.issues, agent_issues: agentIssues, ...(found.length ? { warnings: found } : {}) });
  } else if (valid) {
    printLines([`valid: ${target.file} (version ${result.version}), ${triggerCount(result)}`, ...warnings]);
  } else {
    printLines([...result.issues.map((i) => issueLine(target.file, i)), ...agentIssues.map((i) => issueLine(i.file, i)), ...warnings]);
  }
  setExitCode(valid ? EXIT.ok : EXIT.invalid);
}

export interface Preflight {
  valid: boolean;
  file: string | null;
  version: number | null;
  issues: ManifestIssue[];
  /** what a person reads */
  lines: string[];
}

/** The pre-flight of `svc ship`: the manifest check of the change-request merge gate (no manifest passes). */
export function shipPreflight(pathArg: string): Preflight {
  const target = resolveTarget(pathArg, true);
  if (!target) return { valid: true, file: null, version: null, issues: [], lines: [`pre-flight passed: no svc.yaml or svc.toml in ${pathArg}, nothing to validate`] };
  const result = check(target);
  const warnings = manifestWarnings(result).map((i) => `warning: ${issueLine(target.file, i)}`);
  const lines = result.valid
    ? [`pre-flight passed: ${target.file} (version ${result.version}), ${triggerCount(result)}`, ...warnings]
    : [...result.issues.map((i) => issueLine(target.file, i)), ...warnings, `pre-flight failed: ${result.issues.length} issue${result.issues.length === 1 ? '' : 's'} in ${target.file}`];
  return { valid: result.valid, file: target.file, version: result.version ?? null, issues: result.issues, lines };
}

export function shipDryRunCommand(pathArg: string, options: { json?: boolean }): void {
  const { lines, ...result } = shipPreflight(pathArg);
  if (options.json) printJson(result);
  else printLines(lines);
  setExitCode(result.valid ? EXIT.ok : EXIT.invalid);
}

function scheduleText(t: NormalizedTrigger): string {
  if (t.type === 'webhook') return `secret ${t.secret_env}`;
  if (t.run_at !== undefined) return `once at ${t.run_at}`;
  return t.timezone === 'UTC' ? t.cron! : `${t.cron} (${t.timezone})`;
}

export function triggersListCommand(pathArg: string, options: { json?: boolean }, now = new Date()): void {
  // Someone in a directory without a manifest may have meant a project's triggers.
  const target = resolveTarget(pathArg, false, '; the triggers of a live project: svc triggers ls --project NAME')!;
  const result = check(target);
  const syntaxIssue = result.document === undefined ? result.issues[0] : undefined;
  if (syntaxIssue || typeof result.document !== 'object' || result.document === null || Array.isArray(result.document)) {
    const issue = syntaxIssue ?? { path: '', message: 'the manifest must be a mapping (YAML) or a table (TOML) of keys such as svc_version' };
    throw new CliError(issueLine(target.file, issue), EXIT.invalid);
  }
  const listing = listTriggers(result);
  if (options.json) {
    printJson(listing);
    setExitCode(EXIT.ok);
    return;
  }
  const rows = listing.triggers.map((t) => [
    t.slug, t.type, scheduleText(t), t.session_mode, String(t.enabled), nextFire(t, now)?.toISOString() ?? '-',
  ]);
  printLines(rows.length > 0
    ? formatTable(['slug', 'type', 'schedule or secret', 'mode', 'enabled', 'next fire'], rows)
    : [`no valid triggers in ${target.file}`]);
  printLines(listing.errors.flatMap((e) =>
    e.messages.map((m) => `invalid trigger ${e.index}${e.slug === undefined ? '' : ` (${e.slug})`}: ${m}`)));
  setExitCode(EXIT.ok);
}
