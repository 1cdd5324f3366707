// `svc cr ls|show|diff|open|merge|close|reopen` over the REST API (SPEC §4.6). Defaults from the
// sandbox environment: SVC_PROJECT_ID, SVC_BRANCH_NAME|SVC_HEAD_REF, SVC_SESSION_ID; outside a
// session, --project or a `svc projects link`ed repository. Formatting is pure.
import type { Command } from 'commander';
import type { ChangeRequestPreview, SerializedChangeRequest } from '../../lib/rest-shapes.js';
import { ApiCallError, apiAction, createApiClient, type ApiClient } from '../api-client.js';
import { CliError, EXIT, examples, formatTable, printJson, printLines } from '../output.js';
import { linkedBranch, resolveProjectId } from './link.js';
import { UUID } from '../../lib/uuid.js';

/** A change request as the REST API serializes it. */
export type CrView = SerializedChangeRequest;

/** The merge preview of SPEC §4.1, as the engine computes it, with the manifest gate's issues. */
export type PreviewView = ChangeRequestPreview;

const short = (sha: string | null) => (sha ? sha.slice(0, 12) : '-');

/** `3`, `#3` or a UUID -> a number or an id; anything else is a usage error. */
export function parseCrRef(ref: string): { id: string } | { number: number } {
  if (UUID.test(ref)) return { id: ref.toLowerCase() };
  const m = /^#?(\d+)$/.exec(ref.trim());
  if (m && Number(m[1]) > 0) return { number: Number(m[1]) };
  throw new CliError(`${JSON.stringify(ref)} is not a change request: give its number (3 or #3) or its id (UUID)`);
}

/** What `svc cr show` learned of the merge: the preview, why there is none (a branch deleted on the host), or null (not open). */
export type PreviewOutcome = PreviewView | { error: string } | null;

/**
 * The merge preview of an open CR, or why git cannot compute one now (a branch deleted on the
 * host, the host unreachable): the CR itself is still shown.
 */
async function mergePreview(client: ApiClient, crPath: string): Promise<PreviewOutcome> {
  try {
    return await client.request<PreviewView>('GET', `${crPath}/merge-preview`);
  } catch (error) {
    if (error instanceof ApiCallError && [404, 409, 502, 504].includes(error.status)) return { error: error.message };
    throw error;
  }
}

export function formatCrList(crs: CrView[], status: string): string[] {
  if (crs.length === 0) return [`No ${status === 'all' ? '' : `${status} `}change requests.`];
  return formatTable(
    ['#', 'status', 'title', 'head -> base', 'updated'],
    crs.map((c) => [`#${c.number}`, c.status, c.title, `${c.head_ref} -> ${c.base_ref}`, c.updated_at ?? '-']),
  );
}

export function formatCr(cr: CrView, outcome: PreviewOutcome): string[] {
  const preview = outcome && 'error' in outcome ? null : outcome;
  const lines = [
    `CR #${cr.number}: ${cr.title}`,
    `ID:          ${cr.cr_id}`,
    `Status:      ${cr.status}`,
    `Branches:    ${cr.head_ref} (${short(cr.head_commit_sha)}) -> ${cr.base_ref} (${short(cr.base_commit_sha)})`,
    `Created:     ${cr.created_at ?? '-'} by ${cr.created_by}`,
    `Updated:     ${cr.updated_at ?? '-'}`,
  ];
  if (cr.origin_session_id) lines.push(`Session:     ${cr.origin_session_id}`);
  // no merger: svc found the head already in the base (merged outside svc, or by another CR of the same head)
  if (cr.status === 'merged') lines.push(`Merged:      ${cr.merged_at} ${cr.merged_by ? `by ${cr.merged_by}` : `outside svc (its head reached ${cr.base_ref} another way)`} as ${short(cr.merge_commit_sha)}`);
  if (cr.status === 'closed') lines.push(`Closed:      ${cr.closed_at} by ${cr.closed_by}`);
  if (cr.description) lines.push('', ...cr.description.split('\n').map((l) => `  ${l}`));
  if (cr.metadata.requested_changes.length) {
    lines.push('', 'Requested changes:');
    for (const note of cr.metadata.requested_changes) lines.push(`  ${note.at} ${note.by}: ${note.text}`);
  }
  if (outcome && 'error' in outcome) lines.push('', `Merge preview: unavailable: ${outcome.error}`);
  if (preview) {
    lines.push('', 'Merge preview:');
    const gate = preview.manifest_issues ?? [];
    // the merge gate runs first: a head with an invalid manifest is refused however git would merge it
    const git = preview.is_up_to_date ? 'up to date: the head is already merged into the base'
      : preview.can_fast_forward ? 'can fast-forward'
        : preview.can_merge ? `can merge cleanly (three-way${preview.merge_base ? '' : ', unrelated histories'})` : null;
    if (gate.length && !preview.is_up_to_date) {
      lines.push(`  REFUSED by the manifest gate: the manifest on ${cr.head_ref} has ${gate.length} issue${gate.length === 1 ? '' : 's'}; fix ${gate.length === 1 ? 'it' : 'them'} on the branch, then merge:`,
        ...gate.map((i) => `    ${i.path || '(top level)'}: ${i.message}`));
      if (git) lines.push(`  then git: ${git}`);
    } else if (git) lines.push(`  ${git}`);
    if (!preview.can_merge && !preview.is_up_to_date) {
      const omitted = preview.conflicts_omitted ?? 0;
      lines.push(`  CONFLICTS in ${preview.conflicts.length + omitted} file(s):`, ...preview.conflicts.map((p) => `    ${p}`));
      if (omitted) lines.push(`    and ${omitted} more, not listed`);
    }
  }
  return lines;
}

const COLORS: [RegExp, string][] = [[/^(\+\+\+|---)/, '\x1b[1m'], [/^@@/, '\x1b[36m'], [/^\+/, '\x1b[32m'], [/^-/, '\x1b[31m'], [/^diff --git/, '\x1b[1m']];

/** Colours a unified patch line by line (ANSI). */
export function colorPatch(patch: string): string {
  return patch.split('\n').map((line) => {
    const color = COLORS.find(([re]) => re.test(line))?.[1];
    return color ? `${color}${line}\x1b[0m` : line;
  }).join('\n');
}

interface Context { client: ApiClient; projectId: string; base: string }

async function context(projectOption: string | undefined): Promise<Context> {
  const client = createApiClient();
  const projectId = await resolveProjectId(client, projectOption);
  return { client, projectId, base: `/projects/${projectId}/change-requests` };
}

async function findCr(ctx: Context, ref: string): Promise<CrView> {
  const parsed = parseCrRef(ref);
  if ('id' in parsed) return (await ctx.client.request<{ change_request: CrView }>('GET', `${ctx.base}/${parsed.id}`)).change_request;
  const { change_requests } = await ctx.client.request<{ change_requests: CrView[] }>('GET', `${ctx.base}?status=all`);
  const found = change_requests.find((c) => c.number === parsed.number);
  if (!found) throw new CliError(`no change request #${parsed.number} in this project`, EXIT.invalid);
  return found;
}

export const PROJECT_OPTION = ['--project <id>', 'project id or name (default: SVC_PROJECT_ID, else the linked project)'] as const;

const act = apiAction;

export function registerCrCommands(program: Command): void {
  const cr = program.command('cr').description('change requests: the only way work reaches the default branch (SVC_API_URL, SVC_CLI_TOKEN)');
  cr.addHelpText('after', examples([
    ['svc cr open --title "Add login"', 'inside a session: head, session and project come from the environment'],
    ['svc cr ls --status all', 'every change request of the project'],
    ['svc cr show 3', 'metadata and merge preview of CR #3'],
    ['svc cr merge 3', 'fast-forward or three-way merge'],
    ['svc cr request-changes 3 --feedback "add tests"', "the note goes to the agent of the session that opened CR #3"],
  ]));

  cr.command('ls')
    .description('list change requests (default: open ones), newest first')
    .option('--status <status>', 'open, merged, closed or all', 'open')
    .option('--session <id>', 'only those this session opened')
    .option(...PROJECT_OPTION)
    .option('--json', 'print JSON')
    .action(act(async (opts: { status: string; session?: string; project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      const bySession = opts.session === undefined ? '' : `&origin_session_id=${encodeURIComponent(opts.session)}`;
      const { change_requests } = await ctx.client.request<{ change_requests: CrView[] }>('GET', `${ctx.base}?status=${encodeURIComponent(opts.status)}${bySession}`);
      if (opts.json) printJson(change_requests);
      else printLines(formatCrList(change_requests, opts.status));
    }));

  cr.command('show')
    .description('metadata plus the merge preview (for open change requests)')
    .argument('<cr>', 'number (3 or #3) or id')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { change_request, merge_preview }')
    .action(act(async (ref: string, opts: { project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      const found = await findCr(ctx, ref);
      // GET by id refreshes the SHAs; the preview is fetched for open CRs only.
      const { change_request } = await ctx.client.request<{ change_request: CrView }>('GET', `${ctx.base}/${found.cr_id}`);
      const preview = change_request.status === 'open' ? await mergePreview(ctx.client, `${ctx.base}/${found.cr_id}`) : null;
      if (opts.json) printJson(preview && 'error' in preview ? { change_request, merge_preview: null, merge_preview_error: preview.error } : { change_request, merge_preview: preview });
      else printLines(formatCr(change_request, preview));
    }));

  cr.command('diff')
    .description('the unified patch (coloured on a terminal unless --no-color)')
    .argument('<cr>', 'number (3 or #3) or id')
    .option(...PROJECT_OPTION)
    .option('--no-color', 'never colour the patch')
    .option('--json', 'print the diff object (patch, files, additions, deletions)')
    .action(act(async (ref: string, opts: { project?: string; color: boolean; json?: boolean }) => {
      const ctx = await context(opts.project);
      const found = await findCr(ctx, ref);
      const diff = await ctx.client.request<{ patch: string; files?: { path: string; truncated?: boolean }[] }>('GET', `${ctx.base}/${found.cr_id}/diff`);
      if (opts.json) return printJson(diff);
      process.stdout.write(opts.color && process.stdout.isTTY ? colorPatch(diff.patch) : diff.patch);
      const cut = (diff.files ?? []).filter((f) => f.truncated).map((f) => f.path);
      if (cut.length) process.stderr.write(`note: the patch was cut at the diff limit for ${cut.join(', ')} (docs/change-requests.md, Diff limits)\n`);
    }));

  cr.command('open')
    .description('open a change request from --head (default SVC_BRANCH_NAME or SVC_HEAD_REF, else the branch checked out in a linked checkout) into --base (default: the default branch)')
    .requiredOption('--title <text>', 'title')
    .option('--description <text>', 'description')
    .option('--head <ref>', 'branch to merge from')
    .option('--base <ref>', 'branch to merge into')
    .option('--session <id>', 'originating session (default SVC_SESSION_ID)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print the change request as JSON')
    .action(act(async (opts: { title: string; description?: string; head?: string; base?: string; session?: string; project?: string; json?: boolean }) => {
      const head = opts.head || process.env.SVC_BRANCH_NAME?.trim() || process.env.SVC_HEAD_REF?.trim() || (await linkedBranch());
      if (!head) throw new CliError('no head branch: pass --head, or set SVC_BRANCH_NAME (or SVC_HEAD_REF), or run it on your branch in a checkout linked with svc projects link');
      const session = opts.session || process.env.SVC_SESSION_ID?.trim();
      const ctx = await context(opts.project);
      const body = {
        title: opts.title,
        head_ref: head,
        ...(opts.description !== undefined ? { description: opts.description } : {}),
        ...(opts.base ? { base_ref: opts.base } : {}),
        ...(session ? { session_id: session } : {}),
      };
      const { change_request } = await ctx.client.request<{ change_request: CrView }>('POST', ctx.base, body);
      if (opts.json) printJson(change_request);
      else printLines([`Opened CR #${change_request.number}: ${change_request.title} (${change_request.head_ref} -> ${change_request.base_ref}, id ${change_request.cr_id})`]);
    }));

  cr.command('merge')
    .description('merge: fast-forward when possible, else a three-way merge commit')
    .argument('<cr>', 'number (3 or #3) or id')
    .option('--message <text>', 'merge commit message (default "Merge CR #<n>: <title>")')
    .option(...PROJECT_OPTION)
    .option('--json', 'print the change request as JSON')
    .action(act(async (ref: string, opts: { message?: string; project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      const found = await findCr(ctx, ref);
      const { change_request: c } = await ctx.client.request<{ change_request: CrView }>('POST', `${ctx.base}/${found.cr_id}/merge`, opts.message !== undefined ? { message: opts.message } : {});
      if (opts.json) return printJson(c);
      const how = c.merge_commit_sha === c.head_commit_sha ? 'fast-forward' : 'merge commit';
      printLines([`Merged CR #${c.number} into ${c.base_ref} at ${short(c.merge_commit_sha)} (${how}).`]);
    }));

  cr.command('edit')
    .description('change the title and/or the description')
    .argument('<cr>', 'number (3 or #3) or id')
    .option('--title <text>', 'the new title')
    .option('--description <text>', 'the new description ("" clears it)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print the change request as JSON')
    .action(act(async (ref: string, opts: { title?: string; description?: string; project?: string; json?: boolean }) => {
      if (opts.title === undefined && opts.description === undefined) throw new CliError('nothing to change: pass --title and/or --description', EXIT.usage);
      const ctx = await context(opts.project);
      const found = await findCr(ctx, ref);
      const body = { ...(opts.title !== undefined ? { title: opts.title } : {}), ...(opts.description !== undefined ? { description: opts.description } : {}) };
      const { change_request: c } = await ctx.client.request<{ change_request: CrView }>('PATCH', `${ctx.base}/${found.cr_id}`, body);
      if (opts.json) printJson(c);
      else printLines([`Edited CR #${c.number}: ${c.title}.`]);
    }));

  cr.command('request-changes')
    .description("ask for changes: the note is kept on the change request and sent to the agent of the session that opened it (a stopped session is woken)")
    .argument('<cr>', 'number (3 or #3) or id')
    .requiredOption('--feedback <text>', 'what to change (the agent gets it as a prompt)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print the change request as JSON')
    .action(act(async (ref: string, opts: { feedback: string; project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      const found = await findCr(ctx, ref);
      const { change_request: c } = await ctx.client.request<{ change_request: CrView }>('POST', `${ctx.base}/${found.cr_id}/request-changes`, { feedback: opts.feedback });
      if (opts.json) return printJson(c);
      printLines([c.origin_session_id
        ? `Requested changes on CR #${c.number}: the note goes to session ${c.origin_session_id} as a prompt (svc sessions logs ${c.origin_session_id} shows it arrive).`
        : `Requested changes on CR #${c.number}: no session opened it, so the note is kept on the change request only.`]);
    }));

  for (const [name, description, past] of [['close', 'close without merging', 'Closed'], ['reopen', 'reopen a closed change request', 'Reopened']] as const) {
    cr.command(name)
      .description(description)
      .argument('<cr>', 'number (3 or #3) or id')
      .option(...PROJECT_OPTION)
      .option('--json', 'print the change request as JSON')
      .action(act(async (ref: string, opts: { project?: string; json?: boolean }) => {
        const ctx = await context(opts.project);
        const found = await findCr(ctx, ref);
        const { change_request: c } = await ctx.client.request<{ change_request: CrView }>('POST', `${ctx.base}/${found.cr_id}/${name}`);
        if (opts.json) printJson(c);
        else printLines([`${past} CR #${c.number}: ${c.title}.`]);
      }));
  }
}
