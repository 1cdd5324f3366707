// `svc ship`: the agent mandate (SPEC §1) in one command: the pre-flight manifest check,
// `git push origin HEAD`, then the change request of the session branch (opened, or the open one
// shown). Loaded lazily by commands/ship.ts.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { SerializedChangeRequest } from '../lib/rest-shapes.js';
import { createApiClient, withApiErrors } from './api-client.js';
import { currentProject } from './commands/link.js';
import { shipPreflight } from './manifest-actions.js';
import { CliError, EXIT, printJson, printLines } from './output.js';

const run = promisify(execFile);

export interface ShipOptions { title?: string; description?: string; project?: string; json?: boolean }

async function git(cwd: string, args: string[]): Promise<string> {
  try {
    return (await run('git', args, { cwd, encoding: 'utf8' })).stdout.trim();
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new CliError(`git ${args.join(' ')} failed in ${cwd}: ${(e.stderr || e.message).trim()}`, EXIT.invalid);
  }
}

/** `git push origin HEAD`, its output on our stderr (progress, the gateway's refusals). */
function pushHead(cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['push', 'origin', 'HEAD'], { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', (error) => reject(new CliError(`cannot run git: ${error.message}`, EXIT.invalid)));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new CliError('git push origin HEAD failed (see git\'s message above); nothing was opened', EXIT.invalid))));
  });
}

export async function shipCommand(pathArg: string, options: ShipOptions): Promise<void> {
  const preflight = shipPreflight(pathArg);
  if (!preflight.valid) {
    printLines(preflight.lines, process.stderr);
    throw new CliError('pre-flight failed: fix the manifest, commit, and run svc ship again; nothing was pushed', EXIT.invalid);
  }
  if (!options.json) printLines(preflight.lines);

  const current = await git(pathArg, ['rev-parse', '--abbrev-ref', 'HEAD']);
  const head = process.env.SVC_BRANCH_NAME?.trim() || process.env.SVC_HEAD_REF?.trim() || current;
  if (current === 'HEAD') throw new CliError(`no branch is checked out: git checkout ${head === 'HEAD' ? '<your branch>' : head} first`, EXIT.invalid);
  if (current !== head) throw new CliError(`the session branch is ${head} but ${current} is checked out: git checkout ${head} (merge your work into it) and run svc ship again`, EXIT.invalid);
  if ((await git(pathArg, ['status', '--porcelain'])) !== '') {
    process.stderr.write('svc ship: uncommitted changes are not shipped (only commits are pushed)\n');
  }

  await withApiErrors(async () => {
    // reach the API before pushing: a missing token is said before anything leaves
    const client = createApiClient();
    const project = await currentProject(client, options.project);
    // a push of the default branch would bypass the very change request ship opens
    if (head === project.default_branch) {
      throw new CliError(`${head} is the project's default branch: work reaches it only through a change request. Start a branch (git checkout -b NAME) and run svc ship there; nothing was pushed`, EXIT.invalid);
    }
    await pushHead(pathArg);
    const base = `/projects/${project.id}/change-requests`;
    const { change_requests: open } = await client.request<{ change_requests: SerializedChangeRequest[] }>('GET', `${base}?status=open`);
    const existing = open.find((cr) => cr.head_ref === head);
    if (existing) {
      if (options.json) printJson({ change_request: existing, created: false });
      else printLines([`Pushed ${head}. CR #${existing.number} is already open for it: ${existing.title} (${existing.head_ref} -> ${existing.base_ref}).`]);
      return;
    }
    const session = process.env.SVC_SESSION_ID?.trim();
    const body = {
      title: options.title?.trim() || (await git(pathArg, ['log', '-1', '--format=%s'])),
      head_ref: head,
      ...(options.description !== undefined ? { description: options.description } : {}),
      ...(session ? { session_id: session } : {}),
    };
    const { change_request: cr } = await client.request<{ change_request: SerializedChangeRequest }>('POST', base, body);
    if (options.json) printJson({ change_request: cr, created: true });
    else printLines([`Pushed ${head}. Opened CR #${cr.number}: ${cr.title} (${cr.head_ref} -> ${cr.base_ref}). A person merges it (svc cr merge ${cr.number}).`]);
  });
}
