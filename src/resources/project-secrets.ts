// Project secrets (SPEC §2.4): the rules for their names and the Secret that holds them. Pure:
// the API's secrets routes write the Secret; the Session controller reads it to build a new
// sandbox's environment (SVC_PROJECT_SECRET_NAMES, SVC_PROJECT_SECRETS_REVISION, the values).
//   Secret  `<project>-secrets` (or the Project's spec.secretsSecretRef.name), owned by the Project
//   data    one key per secret name, the value base64 as Kubernetes stores it
//   annotation `svc.dev/secrets-updated-at`: JSON { NAME: RFC 3339 } (when each was last set)
//   revision = the Secret's resourceVersion, "0" when there is no Secret
import { LABEL_PROJECT } from './constants.js';
import { controllerReference, type KubeObject } from './meta.js';
import type { Project } from './project.js';

export const SECRET_NAME_PATTERN = /^[A-Z_][A-Z0-9_]*$/;
/** Platform variables (SPEC §2.6) use it; a project secret may not. */
export const RESERVED_SECRET_PREFIX = 'SVC_';
/**
 * One annotation for all names: a key per name (`…/secret-updated-at.<NAME>`) would not be a
 * valid annotation key for names ending in `_` or longer than 45 characters.
 */
export const SECRETS_UPDATED_AT_ANNOTATION = 'svc.dev/secrets-updated-at';
/** Largest value: it becomes an environment variable, and Linux caps one at 128 KiB. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;
/** Largest name (the environment has no bound; a list of names must stay readable). */
export const MAX_SECRET_NAME_LENGTH = 256;

export interface ProjectSecretsSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

export interface SecretListing {
  secrets: { name: string; updated_at: string | null }[];
  revision: string;
}

/** The name of the Secret holding a project's secrets. */
export function projectSecretsName(project: Pick<Project, 'metadata' | 'spec'>): string {
  return project.spec.secretsSecretRef?.name ?? `${project.metadata.name}-secrets`;
}

/** Why `name` cannot be a project secret's name, or null when it can. */
export function secretNameProblem(name: string): string | null {
  if (name.startsWith(RESERVED_SECRET_PREFIX)) {
    return `the prefix ${RESERVED_SECRET_PREFIX} is reserved for platform variables: choose a name that does not start with it`;
  }
  if (!SECRET_NAME_PATTERN.test(name)) return `${JSON.stringify(name)} must match ${SECRET_NAME_PATTERN.source} (upper-case letters, digits and _, not starting with a digit)`;
  if (name.length > MAX_SECRET_NAME_LENGTH) return `a secret name has at most ${MAX_SECRET_NAME_LENGTH} characters`;
  return null;
}

/** Why `value` cannot be a secret's value, or null when it can. */
export function secretValueProblem(value: string): string | null {
  if (value.includes('\0')) return 'a secret value may not contain a NUL character (it becomes an environment variable)';
  if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_VALUE_BYTES) return `a secret value has at most ${MAX_SECRET_VALUE_BYTES} bytes`;
  return null;
}

/** Changes on every write of the Secret; "0" before the first secret. */
export function secretsRevision(secret: ProjectSecretsSecret | undefined): string {
  return secret?.metadata.resourceVersion ?? '0';
}

/** The usable names of the Secret, sorted (keys that are not valid secret names are ignored). */
export function secretNames(secret: ProjectSecretsSecret | undefined): string[] {
  return Object.keys(secret?.data ?? {}).filter((name) => secretNameProblem(name) === null).sort();
}

/** Name -> plain value, for a sandbox's environment. */
export function secretValues(secret: ProjectSecretsSecret | undefined): Record<string, string> {
  const data = secret?.data ?? {};
  return Object.fromEntries(secretNames(secret).map((name) => [name, Buffer.from(data[name]!, 'base64').toString('utf8')]));
}

function updatedAt(secret: ProjectSecretsSecret | undefined): Record<string, string> {
  const raw = secret?.metadata.annotations?.[SECRETS_UPDATED_AT_ANNOTATION];
  if (!raw) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return {};
  }
}

/** What GET /secrets answers: names and when each was set, never values. */
export function secretListing(secret: ProjectSecretsSecret | undefined): SecretListing {
  const times = updatedAt(secret);
  return {
    secrets: secretNames(secret).map((name) => ({ name, updated_at: times[name] ?? null })),
    revision: secretsRevision(secret),
  };
}

function withTimes(secret: ProjectSecretsSecret, times: Record<string, string>): ProjectSecretsSecret {
  const sorted = Object.fromEntries(Object.entries(times).sort(([a], [b]) => a.localeCompare(b)));
  return {
    ...secret,
    metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, [SECRETS_UPDATED_AT_ANNOTATION]: JSON.stringify(sorted) } },
  };
}

/**
 * The Secret with `name` set to `value` at `now`: `existing` changed (its resourceVersion kept
 * as the precondition of a replace), or a new Secret owned by the project.
 */
export function withSecret(project: Project, existing: ProjectSecretsSecret | undefined, name: string, value: string, now: Date): ProjectSecretsSecret {
  const base: ProjectSecretsSecret = existing ?? {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: projectSecretsName(project),
      namespace: project.metadata.namespace,
      labels: { [LABEL_PROJECT]: project.metadata.name! },
      ownerReferences: [controllerReference(project)],
    },
    type: 'Opaque',
    data: {},
  };
  const next = { ...base, data: { ...base.data, [name]: Buffer.from(value, 'utf8').toString('base64') } };
  return withTimes(next, { ...updatedAt(base), [name]: now.toISOString() });
}

/** The Secret without `name`, or null when it does not hold that name (nothing to change). */
export function withoutSecret(existing: ProjectSecretsSecret | undefined, name: string): ProjectSecretsSecret | null {
  if (!existing?.data || !(name in existing.data)) return null;
  const data = { ...existing.data };
  delete data[name];
  const times = updatedAt(existing);
  delete times[name];
  return withTimes({ ...existing, data }, times);
}
