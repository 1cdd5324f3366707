// Manifests the trigger tests and benches share: one agent and a signed webhook trigger `hook`,
// and a Project that serves it.
import { runOk, waitFor } from '../dev/util.js';
import type { DevInstance } from './dev.js';

/** A version 2 svc.yaml with agent `coder` and webhook trigger `hook` (secret HOOK_SECRET) prompting `prompt`; `more` follows (triggers, top-level keys). */
export function webhookManifest(prompt: string, more = ''): string {
  return `svc_version: 2
default_agent: coder
agents:
  coder: {}
triggers:
  - slug: hook
    type: webhook
    secret_env: HOOK_SECRET
    prompt: "${prompt}"
${more}`;
}

/**
 * Applies a Project `name` of `repo` (its svc.yaml from webhookManifest), its Secret with HOOK_SECRET,
 * and waits until the API serves its webhook trigger `hook` (an unsigned delivery gets 401). Returns the project's id.
 */
export async function webhookProject(dev: DevInstance, name: string, repo: string, secret: string): Promise<string> {
  const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name }, spec: { repoUrl: repo, defaultBranch: 'main' } }));
  await kubectl('create', 'secret', 'generic', `${name}-secrets`, `--from-literal=HOOK_SECRET=${secret}`);
  const projectId = await waitFor(`project ${name}`, async () => (await kubectl('get', 'project', name, '-o', 'jsonpath={.metadata.uid}')) || undefined);
  await waitFor('the API to serve the trigger', async () => (await fetch(`${dev.apiUrl}/webhooks/projects/${projectId}/hook`, { method: 'POST', body: '{}' })).status === 401, 60_000);
  return projectId;
}
