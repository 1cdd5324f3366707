// `svc projects create|ls|show|delete` over the REST API (docs/api.md). Output formatting is pure.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { createApiClient, withApiErrors, type ApiClient } from '../api-client.js';
import { CliError, EXIT, formatTable, printJson, printLines } from '../output.js';
import type { SerializedProject } from '../../lib/rest-shapes.js';

type ProjectView = SerializedProject;

function readyOf(p: ProjectView): string {
  return p.conditions.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
}

function manifestOf(p: ProjectView): string {
  if (!p.manifest) return '-';
  // no file: the branch has neither svc.yaml nor svc.toml (the Ready condition says so)
  if (!p.manifest.file) return 'missing';
  return `${p.manifest.file} ${p.manifest.valid ? 'valid' : 'invalid'}`;
}

export function formatProjectList(projects: ProjectView[]): string[] {
  if (projects.length === 0) return ['No projects. Create one with: svc projects create NAME --repo URL'];
  return formatTable(
    ['name', 'id', 'ready', 'branch', 'manifest', 'triggers'],
    projects.map((p) => [p.name, p.id, readyOf(p), p.default_branch, manifestOf(p), String(p.triggers.length)]),
  );
}

export function formatProject(p: ProjectView): string[] {
  const lines = [
    `Name:           ${p.name}`,
    `ID:             ${p.id}`,
    `Namespace:      ${p.namespace}`,
    `Repository:     ${p.repo_url}${p.credentials_secret ? ` (credentials: Secret ${p.credentials_secret})` : ''}`,
    `Default branch: ${p.default_branch}${p.default_branch_sha ? ` at ${p.default_branch_sha.slice(0, 12)}` : ''}`,
  ];
  if (p.description) lines.push(`Description:    ${p.description}`);
  lines.push(`Manifest:       ${manifestOf(p)}${p.manifest?.version ? ` (version ${p.manifest.version})` : ''}`);
  for (const issue of p.manifest?.issues ?? []) lines.push(`  ${issue.path || '(top level)'}: ${issue.message}`);
  lines.push(p.triggers.length ? 'Triggers:' : 'Triggers:       none');
  for (const t of p.triggers) {
    const schedule = t.cron ? `  ${String(t.cron)}` : t.run_at ? `  once at ${String(t.run_at)}` : '';
    lines.push(`  ${t.slug}  ${String(t.type)}${schedule}${t.enabled === false ? '  (disabled)' : ''}`);
  }
  if (p.trigger_errors.length) {
    lines.push('Invalid trigger entries:');
    for (const e of p.trigger_errors) lines.push(`  #${e.index}${e.slug ? ` ${e.slug}` : ''}: ${e.messages.join('; ')}`);
  }
  lines.push('Conditions:');
  if (p.conditions.length === 0) lines.push('  (not reconciled yet)');
  for (const c of p.conditions) lines.push(`  ${c.type}=${c.status} ${c.reason}: ${c.message}`);
  return lines;
}

/**
 * A relative path to a repository on this machine (`./demo.git`, as git clone takes one), made
 * absolute: the API takes absolute paths only (svc dev; a deployment refuses local paths). URLs,
 * `host:path` and paths that are not there go as given, for the API to judge.
 */
export function localRepoPath(repo: string, cwd = process.cwd()): string {
  if (path.isAbsolute(repo) || repo.includes('://')) return repo;
  const colon = repo.indexOf(':');
  const slash = repo.indexOf('/');
  if (colon >= 0 && (slash < 0 || colon < slash)) return repo; // scp-like host:path, as git reads it
  const resolved = path.resolve(cwd, repo);
  return existsSync(resolved) ? resolved : repo;
}

/** Runs a command with an API client; a failed call becomes `svc: <server message>` and exit 1. */
function withApi<A extends unknown[]>(action: (client: ApiClient, ...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args: A) => withApiErrors(() => action(createApiClient(), ...args));
}

/** Accepts the project's id (UUID) or its name. */
async function findProject(client: ApiClient, ref: string): Promise<ProjectView> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref)) {
    return (await client.request<{ project: ProjectView }>('GET', `/projects/${ref}`)).project;
  }
  const { projects } = await client.request<{ projects: ProjectView[] }>('GET', '/projects');
  const found = projects.find((p) => p.name === ref);
  if (!found) throw new CliError(`no project named ${ref}`, EXIT.invalid);
  return found;
}

export function registerProjectsCommands(program: Command): void {
  const projects = program.command('projects').description('create and inspect projects (REST API: SVC_API_URL, SVC_CLI_TOKEN)');

  projects
    .command('create')
    .description('create a project backed by a git repository')
    .argument('<name>', 'project name (a DNS-1123 label)')
    .requiredOption('--repo <url>', 'clone URL of the repository (or an absolute path)')
    .option('--default-branch <branch>', 'branch whose manifest drives triggers', 'main')
    .option('--description <text>', 'free text')
    .option('--credentials-secret <name>', "the Secret (in the project's namespace) with the repository's credentials: ssh-privatekey and known_hosts for ssh URLs, username and password (or token) for https (docs/repositories.md)")
    .option('--json', 'print the project as JSON')
    .action(withApi(async (client, name: string, opts: { repo: string; defaultBranch: string; description?: string; credentialsSecret?: string; json?: boolean }) => {
      const body = {
        name, repo_url: localRepoPath(opts.repo), default_branch: opts.defaultBranch,
        ...(opts.description !== undefined ? { description: opts.description } : {}),
        ...(opts.credentialsSecret !== undefined ? { credentials_secret: opts.credentialsSecret } : {}),
      };
      const { project } = await client.request<{ project: ProjectView }>('POST', '/projects', body);
      if (opts.json) printJson(project);
      else printLines([`Created project ${project.name} (${project.id}).`, `Follow it with: svc projects show ${project.name}`]);
    }));

  projects
    .command('ls')
    .description('list projects')
    .option('--json', 'print JSON')
    .action(withApi(async (client, opts: { json?: boolean }) => {
      const { projects: list } = await client.request<{ projects: ProjectView[] }>('GET', '/projects');
      if (opts.json) printJson(list);
      else printLines(formatProjectList(list));
    }));

  projects
    .command('show')
    .description('show one project: manifest, triggers, conditions')
    .argument('<project>', 'project id or name')
    .option('--json', 'print JSON')
    .action(withApi(async (client, ref: string, opts: { json?: boolean }) => {
      const project = await findProject(client, ref);
      if (opts.json) printJson(project);
      else printLines(formatProject(project));
    }));

  projects
    .command('delete')
    .alias('rm')
    .description('delete a project: its sessions, triggers, fires and change requests go with it; the repository stays')
    .argument('<project>', 'project id or name')
    .option('--yes', 'really delete it (required)')
    .addHelpText('after', '\nExamples:\n  $ svc projects delete demo --yes')
    .action(withApi(async (client, ref: string, opts: { yes?: boolean }) => {
      const project = await findProject(client, ref);
      if (!opts.yes) {
        throw new CliError(`deleting project ${project.name} stops and deletes its sessions and deletes its triggers, fires and change requests (the repository stays); run again with --yes to delete it`, EXIT.usage);
      }
      await client.request('DELETE', `/projects/${project.id}`);
      printLines(deletedLines(project));
    }));
}

function deletedLines(project: Pick<ProjectView, 'name' | 'id'>): string[] {
  return [
    `Deleting project ${project.name} (${project.id}): its sessions stop and their branches leave the repository (unless an open change request uses one); its triggers, fires and change requests go with it. The repository itself is left as it is.`,
    `Follow it with: kubectl get project ${project.name} (gone when the deletion is done)`,
  ];
}
