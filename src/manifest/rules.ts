// Shared definitions of SPEC §2.1 as zod building blocks; every other schema is made of these.
import * as z from 'zod';
import { clipText, firstAndMore } from '../lib/clip.js';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,127}$/;
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const SECRET_ENV_PATTERN = /^[A-Z_][A-Z0-9_]*$/;

/** "a, b or c" for messages that name allowed values. */
export function oneOf(values: readonly string[]): string {
  return values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

/** A name as a message shows it: names are at most 128 characters (SPEC §8), a longer one is cut. */
export function shownName(name: string): string {
  return clipText(name, 129);
}

/** The names a message offers ("must name a key of agents (a, b, ...)"): the first 20, then how many more. */
export function namesList(names: readonly string[]): string {
  return firstAndMore(names.slice(0, 20).map(shownName), 20, names.length);
}

/**
 * A schema-level message for a value that is present but wrong; a missing value falls through
 * to the generic "is required" (a schema-level message would otherwise win).
 */
export const whenPresent = (message: string) => (iss: { input?: unknown }) => (iss.input === undefined ? undefined : message);

export function enumOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: whenPresent(`must be one of ${values.join(', ')}`) });
}

export const slug = () =>
  z.string().regex(SLUG_PATTERN, {
    error: `must match ${SLUG_PATTERN.source} (lowercase letters, digits, _ and -, starting with a letter or digit, at most 128 characters)`,
  });

export const nonEmptyString = () => z.string().min(1, { error: 'must not be empty' });

export const envName = () =>
  z.string().regex(ENV_NAME_PATTERN, { error: `must be an environment variable name matching ${ENV_NAME_PATTERN.source}` });

export const secretEnvName = () =>
  z.string().regex(SECRET_ENV_PATTERN, { error: `must match ${SECRET_ENV_PATTERN.source} (uppercase letters, digits and _)` });

const FLEXIBLE_BOOLEAN_WORDS = ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'] as const;
const FLEXIBLE_BOOLEAN_MESSAGE = `must be a boolean, a number, or one of ${FLEXIBLE_BOOLEAN_WORDS.join(', ')} (any case)`;
export const flexibleBoolean = () =>
  z.union([
    z.boolean(),
    z.number(),
    z.string().refine((s) => (FLEXIBLE_BOOLEAN_WORDS as readonly string[]).includes(s.toLowerCase()), { error: FLEXIBLE_BOOLEAN_MESSAGE }),
  ], { error: whenPresent(FLEXIBLE_BOOLEAN_MESSAGE) });

/** A list of items, or one of the keywords `all` / `none`. */
export const listOrKeyword = (item: z.ZodType, what: string) =>
  z.union([z.enum(['all', 'none']), z.array(item)], { error: whenPresent(`must be a list of ${what}, or all, or none`) });

export const allowlist = () => listOrKeyword(nonEmptyString(), 'non-empty names');

export const safeRelativePath = () =>
  z.string().refine((p) => p.length > 0 && !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), {
    error: 'must be a relative path inside the repository: not empty, not starting with /, no .. segment',
  });

/** A key that must not appear; `why` finishes the sentence "is not allowed: ...". */
export const forbidden = (why: string) => z.never({ error: `is not allowed: ${why}` }).optional();

export const positiveInt = () => z.int({ error: 'must be a whole number' }).min(1, { error: 'must be at least 1' });

/** Map/table whose contents the spec does not show. */
export const anyObject = () => z.record(z.string(), z.unknown());

export const CAPABILITIES = [
  'project.read', 'project.write', 'project.deploy', 'project.delete', 'project.cr.open', 'project.cr.merge',
  'project.session.read', 'project.session.start', 'project.session.stop', 'project.members.read',
  'project.members.manage', 'project.trigger.read', 'project.trigger.create', 'project.trigger.update',
  'project.trigger.delete', 'project.trigger.fire', 'project.gateway.logs.read', 'project.gateway.spend.read',
  'project.gateway.budget.set', 'project.gateway.keys.manage', 'project.agent.read', 'project.agent.write',
  'project.skill.read', 'project.skill.write', 'project.command.read', 'project.command.write', 'project.file.read',
  'project.file.write', 'project.customize.read', 'project.customize.write', 'project.gitops.read',
  'project.gitops.push', 'project.gitops.merge', 'project.secret.read', 'project.secret.write',
  'project.connector.read', 'project.connector.write', 'project.review.read', 'project.review.submit',
  'project.review.act', '*',
] as const;

export const V1_ONLY_CAPABILITIES = [
  'project.session.exec', 'project.gateway.routing.edit', 'project.schedule.read', 'project.schedule.write',
  'project.webhook.read', 'project.webhook.write', 'channel.read', 'channel.connect', 'channel.send',
  'channel.disconnect',
] as const;

export type ManifestVersion = 1 | 2;

export const svcCli = (version: ManifestVersion) => {
  const names: readonly string[] = version === 1 ? [...CAPABILITIES, ...V1_ONLY_CAPABILITIES] : CAPABILITIES;
  const item = z.string().refine((s) => names.includes(s), {
    error: (iss) => (typeof iss.input === 'string' && version === 2 && (V1_ONLY_CAPABILITIES as readonly string[]).includes(iss.input)
      ? `capability ${iss.input} exists only in version 1 manifests`
      : 'is not a capability name (see the list in docs/manifest.md, e.g. project.read, project.cr.open, *)'),
  });
  return listOrKeyword(item, 'capability names');
};

/** Adds a custom issue at `path` (relative to the value being refined). */
export function report(ctx: z.RefinementCtx, path: PropertyKey[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}

/** Object-level rules must also run when a field already failed, so every reason is reported. */
export const ALWAYS = { when: () => true } as const;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
