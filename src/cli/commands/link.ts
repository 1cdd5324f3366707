// `svc projects link [PROJECT]`: links the working directory's git repository to a project.
// The link is `svc.project` in the repository's local git config (.git/config), which git
// never commits. `svc cr` reads it when neither --project nor SVC_PROJECT_ID is given.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { createApiClient, withApiErrors, type ApiClient } from '../api-client.js';
import { CliError, EXIT } from '../output.js';
import { UUID } from '../../lib/uuid.js';

const run = promisify(execFile);
const LINK_KEY = 'svc.project';

interface ProjectSummary { id: string; name: string; default_branch: string }

async function gitConfig(cwd: string, args: string[]): Promise<string | null> {
  try {
    return (await run('git', ['config', '--local', ...args], { cwd })).stdout.trim() || null;
  } catch (error) {
    const e = error as { code?: number | string; stderr?: string };
    if (e.code === 1) return null; // key not set
    // git 2.39 says "--local can only be used inside a git repository"; others "not in a git directory"
    if (/not in a git directory|not a git repository|only be used inside a git repository/i.test(e.stderr ?? '')) {
      throw new CliError(`${cwd} is not inside a git repository: run svc projects link in your clone of the project`);
    }
    throw new CliError(`git config failed: ${(e.stderr ?? String(error)).trim()}`);
  }
}

/** The project id linked to the repository containing `cwd`, or null (also outside a repository). */
export async function linkedProject(cwd = process.cwd()): Promise<string | null> {
  try {
    return await gitConfig(cwd, ['--get', LINK_KEY]);
  } catch {
    return null;
  }
}

/**
 * The branch checked out in a linked repository (SPEC §4.6: outside a session, a linked working
 * directory stands for `--head`); null when it is not linked, not a repository, or detached.
 */
export async function linkedBranch(cwd = process.cwd()): Promise<string | null> {
  if (!(await linkedProject(cwd))) return null;
  try {
    const branch = (await run('git', ['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd })).stdout.trim();
    return branch || null;
  } catch {
    return null;
  }
}

/** A project by id or by name, as the API knows it. */
export async function resolveProject(client: ApiClient, ref: string): Promise<ProjectSummary> {
  if (UUID.test(ref)) return (await client.request<{ project: ProjectSummary }>('GET', `/projects/${ref}`)).project;
  const { projects } = await client.request<{ projects: ProjectSummary[] }>('GET', '/projects');
  const found = projects.find((p) => p.name === ref);
  if (!found) throw new CliError(`no project named ${ref} (svc projects ls lists them)`, EXIT.invalid);
  return found;
}

/** How the command names its project: `--project` (id or name), else SVC_PROJECT_ID, else the linked one. */
async function projectRef(projectOption: string | undefined): Promise<string> {
  const ref = projectOption || process.env.SVC_PROJECT_ID?.trim() || (await linkedProject());
  if (!ref) throw new CliError('no project: pass --project, set SVC_PROJECT_ID, or run svc projects link PROJECT in your clone');
  return ref;
}

/** The id of the project a command acts on (an id given is not looked up). */
export async function resolveProjectId(client: ApiClient, projectOption: string | undefined): Promise<string> {
  const ref = await projectRef(projectOption);
  return UUID.test(ref) ? ref : (await resolveProject(client, ref)).id;
}

/** The project a command acts on, as the API knows it (one read). */
export async function currentProject(client: ApiClient, projectOption: string | undefined): Promise<ProjectSummary> {
  return resolveProject(client, await projectRef(projectOption));
}

export function registerLinkCommand(program: Command): void {
  const projects = program.commands.find((c) => c.name() === 'projects') ?? program.command('projects').description('projects');
  projects
    .command('link')
    .description('link this git repository to a project (stored in .git/config, never committed); without PROJECT, show the link')
    .argument('[project]', 'project id or name')
    .option('--json', 'print { project_id }')
    .action(async (ref: string | undefined, opts: { json?: boolean }) => {
      await withApiErrors(async () => {
        const cwd = process.cwd();
        if (ref === undefined) {
          const id = await gitConfig(cwd, ['--get', LINK_KEY]);
          if (opts.json) process.stdout.write(`${JSON.stringify({ project_id: id })}\n`);
          else process.stdout.write(id ? `${id}\n` : 'not linked: run svc projects link PROJECT\n');
          return;
        }
        const project = await resolveProject(createApiClient(), ref);
        await gitConfig(cwd, [LINK_KEY, project.id]);
        if (opts.json) process.stdout.write(`${JSON.stringify({ project_id: project.id })}\n`);
        else process.stdout.write(`Linked this repository to project ${project.name} (${project.id}).\n`);
      });
    });
}
