// What a trigger's prompt can name (SPEC §6): the variables of its own source, and those of a manual
// fire (any trigger can be fired by hand). A tag that names anything else renders empty at every
// fire. The spec allows that (no error), but it is nearly always a slip (`{{ payload.ref }}` for
// `{{ body.ref }}`), so `svc manifest validate` and `svc ship` warn about it. The sets come from
// the functions that build each source's variables, so they cannot drift from what a fire renders.
import type { ManifestIssue, NormalizedTrigger } from '../manifest/index.js';
import { lookup, templatePaths } from './template.js';
import { cronVariables, manualVariables, webhookVariables, type TemplateVariables } from './variables.js';

const SAMPLE_AT = new Date(0);

/** What a fire of one source has: its variables and the paths a person can write of them. */
interface Known { variables: TemplateVariables; leaves: string[] }

function known(variables: TemplateVariables): Known {
  return { variables, leaves: leaves(variables) };
}

/** The paths a person can write: leaves, and `x.*` for an object whose keys come with the fire (a webhook's body). */
function leaves(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [prefix];
  const keys = Object.keys(value);
  if (keys.length === 0) return [`${prefix}.*`];
  return keys.flatMap((key) => leaves((value as Record<string, unknown>)[key], prefix ? `${prefix}.${key}` : key));
}

// built once, where a manifest is checked or a trigger listed (the CLI's manifest commands and the
// API import this file; src/triggers/index.ts does not)
const SOURCES: Record<NormalizedTrigger['type'], Known> = {
  cron: known(cronVariables({ slug: 'sample', type: 'cron' }, { schedule: '* * * * * *', timezone: 'UTC', firedAt: SAMPLE_AT })),
  webhook: known(webhookVariables({ slug: 'sample', type: 'webhook' }, { rawBody: Buffer.from('{}'), headers: {}, firedAt: SAMPLE_AT })),
};
const MANUAL = known(manualVariables({ slug: 'sample', type: 'cron' }, { actor: 'sample', firedAt: SAMPLE_AT }));

function names({ variables, leaves: paths }: Known, path: string): boolean {
  if (!path) return false;
  if (lookup(variables, path) !== undefined) return true;
  // below an open object (a webhook's body): any path
  return paths.some((leaf) => leaf.endsWith('.*') && path.startsWith(leaf.slice(0, -1)));
}

/** What is wrong with each tag of a trigger's prompt that names no variable of its source nor of a manual fire. */
export function promptTagWarnings(trigger: Pick<NormalizedTrigger, 'type' | 'prompt'>): string[] {
  const own = SOURCES[trigger.type];
  // an object without what the CRD requires (a test's fake): nothing to warn about, and no 500
  if (!own || typeof trigger.prompt !== 'string') return [];
  const unknown = [...new Set(templatePaths(trigger.prompt))].filter((path) => !names(own, path) && !names(MANUAL, path));
  const manualOnly = MANUAL.leaves.filter((leaf) => !own.leaves.includes(leaf));
  return unknown.map((path) => `{{ ${path} }} names no variable of a ${trigger.type} fire and renders empty; it has ${own.leaves.join(', ')} (fired by hand also ${manualOnly.join(', ')})`);
}

/** A warning for each tag of a trigger's prompt that names no variable of its source nor of a manual fire. */
export function promptVariableWarnings(triggers: readonly NormalizedTrigger[], document: unknown): ManifestIssue[] {
  const entries = (document as { triggers?: unknown } | null)?.triggers;
  return triggers.flatMap((trigger) => {
    const messages = promptTagWarnings(trigger);
    if (messages.length === 0) return [];
    const index = Array.isArray(entries) ? entries.findIndex((e) => (e as { slug?: unknown } | null)?.slug === trigger.slug) : -1;
    const path = index >= 0 ? `/triggers/${index}/prompt` : '/triggers';
    return messages.map((message) => ({ path, message }));
  });
}
