/**
 * The one reader of git credentials: a Project's spec.gitCredentialsSecretRef names a Secret in
 * its namespace with `ssh-privatekey` and `known_hosts` (ssh URLs; the keys of a
 * `kubernetes.io/ssh-auth` Secret plus the host keys), or `password` (and optional `username`,
 * default `git`) or `token` (username default `x-access-token`) for http(s) URLs
 * (docs/repositories.md). Used by the Project and Session controllers, the change-request
 * service and the git gateway.
 */
import { SECRET, type KubeObject, type Project } from '../resources/index.js';
import type { KubeClient } from './client.js';

export interface GitCredentialPair { username: string; password: string }
export interface GitSshCredentials { sshPrivateKey: string; knownHosts: string }

export type GitCredentialsLookup =
  /** `credentials` null: the project names no Secret (anonymous access). */
  | { ok: true; credentials: GitCredentialPair | GitSshCredentials | null }
  /** The named Secret is missing or unusable; `message` says which and how. */
  | { ok: false; message: string };

/** Decoded data of a Secret, or null when it does not exist. */
export async function readSecretData(client: KubeClient, namespace: string, name: string): Promise<Record<string, string> | null> {
  const secret = await client.resource<KubeObject & { data?: Record<string, string> }>(SECRET).find(namespace, name);
  if (!secret) return null;
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** Credentials from a Secret's decoded data (null data: the Secret does not exist). */
export function gitCredentialsFromSecret(secretName: string, namespace: string, data: Record<string, string> | null): GitCredentialsLookup {
  if (!data) return { ok: false, message: `the git credentials Secret ${secretName} does not exist in namespace ${namespace}` };
  const key = data['ssh-privatekey'];
  if (key !== undefined) {
    if (!data.known_hosts?.trim()) {
      return { ok: false, message: `the git credentials Secret ${secretName} has ssh-privatekey but no known_hosts: add the host's keys (ssh-keyscan -p PORT HOST, checked against what the host's admin publishes) as known_hosts; host keys are always verified` };
    }
    return { ok: true, credentials: { sshPrivateKey: key, knownHosts: data.known_hosts } };
  }
  if (data.password !== undefined) return { ok: true, credentials: { username: data.username || 'git', password: data.password } };
  if (data.token !== undefined) return { ok: true, credentials: { username: data.username || 'x-access-token', password: data.token } };
  return { ok: false, message: `the git credentials Secret ${secretName} has none of ssh-privatekey (with known_hosts), password or token` };
}

/** The credentials `project` names, read through `readSecret` (default: the API server). */
export async function readGitCredentials(
  project: Project, readSecret: (namespace: string, name: string) => Promise<Record<string, string> | null>,
): Promise<GitCredentialsLookup> {
  const ref = project.spec.gitCredentialsSecretRef?.name;
  if (!ref) return { ok: true, credentials: null };
  const namespace = project.metadata.namespace ?? '';
  return gitCredentialsFromSecret(ref, namespace, await readSecret(namespace, ref));
}
