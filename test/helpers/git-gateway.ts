// The git gateway as an agent uses it, for tests on the in-process API (test/changerequests/
// harness.ts): the real git binary with a credential helper that answers like the daemon's, and
// Sessions with their Secret as the Session controller makes them.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { newSandboxToken } from '../../src/lib/sandbox-token.js';
import { API_VERSION, SECRET, SESSION, controllerReference, type KubeObject, type Project, type Session } from '../../src/resources/index.js';
import { NAMESPACE, type Harness } from '../changerequests/harness.js';

export interface Ran { code: number; stdout: string; stderr: string }
export interface Credential { username: string; password: string; expires_at?: string }

export const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Agent', GIT_AUTHOR_EMAIL: 'agent@example.com', GIT_COMMITTER_NAME: 'Agent', GIT_COMMITTER_EMAIL: 'agent@example.com',
};
// What the daemon's helper does, from the environment of this test's git calls.
const HELPER = '!f() { test "$1" = get || exit 0; echo "username=$GW_USER"; echo "password=$GW_PASS"; }; f';

/** git with the clone credential offered by a credential helper; never throws. `timeoutMs` kills it (exit code -1). */
export function git(cwd: string, args: string[], credential?: Credential, timeoutMs?: number): Promise<Ran> {
  const env = { ...GIT_ENV, GW_USER: credential?.username ?? '', GW_PASS: credential?.password ?? '' };
  const config = credential ? ['-c', 'credential.helper=', '-c', `credential.helper=${HELPER}`] : ['-c', 'credential.helper='];
  return new Promise((resolve) => {
    execFile('git', [...config, ...args], { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const killed = error && (error as { killed?: boolean }).killed;
      resolve({ code: killed ? -1 : error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

export async function gitOk(cwd: string, args: string[], credential?: Credential): Promise<string> {
  const ran = await git(cwd, args, credential);
  if (ran.code !== 0) throw new Error(`git ${args.join(' ')} exited ${ran.code}:\n${ran.stderr}`);
  return ran.stdout.trim();
}

export interface TestSession { id: string; sandboxToken: string }

/** A Session of the project and its Secret, as the Session controller makes them. */
export async function createTestSession(h: Harness, owner: Project): Promise<TestSession> {
  const id = randomUUID();
  const created = await h.client.resource<Session>(SESSION).create({
    apiVersion: API_VERSION, kind: SESSION.kind,
    metadata: { name: id, namespace: NAMESPACE, labels: { 'svc.dev/project': owner.metadata.name! }, ownerReferences: [controllerReference(owner)] },
    spec: { projectRef: { name: owner.metadata.name! }, agent: 'default', baseRef: 'main', desiredState: 'running' },
  } as Session);
  const sandboxToken = newSandboxToken(id);
  await h.client.resource(SECRET).create({
    apiVersion: 'v1', kind: 'Secret',
    metadata: { name: `svc-session-${id}`, namespace: NAMESPACE, labels: { 'svc.dev/session': id }, ownerReferences: [controllerReference(created)] },
    type: 'Opaque',
    data: { sandboxToken: Buffer.from(sandboxToken).toString('base64'), cliToken: Buffer.from('svc_x').toString('base64') },
  } as KubeObject);
  return { id, sandboxToken };
}

/** `GET .../git/clone-credential` with `token` as bearer. */
export function cloneCredentialOf(h: Harness, token: string, projectId: string): Promise<Response> {
  return fetch(`${h.apiUrl}/projects/${projectId}/git/clone-credential`, { headers: { authorization: `Bearer ${token}` } });
}
