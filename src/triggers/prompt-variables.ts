// What a trigger's prompt can name (SPEC §6): the variables of its own source, and those of a manual
// fire (any trigger can be fired by hand). A tag that names anything else renders empty at every
// fire. The spec allows that (no error), but it is nearly always a slip (`{{ payload.ref }}` for
// `{{ body.ref }}`), so `svc manifest validate` and `svc ship` warn about it. The sets come from
// the functions that build each source's variables, so they cannot drift from what a fire renders.
import type { ManifestIssue, NormalizedTrigger } from '../manifest/index.js';
import { lookup, templatePaths } from './template.js';
import { cronVariables, manualVariables, webhookVariables, type TemplateVariables } from './variables.js';

const SAMPLE_AT = new Date(0);

function sourceVariables(type: NormalizedTrigger['type']): TemplateVariables {
  const trigger = { slug: 'sample', type };
  return type === 'cron'
    ? cronVariables(trigger, { schedule: '* * * * * *', timezone: 'UTC', firedAt: SAMPLE_AT })
    : webhookVariables(trigger, { rawBody: Buffer.from('{}'), headers: {}, firedAt: SAMPLE_AT });
}

/** The paths a person can write: leaves, and `x.*` for an object whose keys come with the fire (a webhook's body). */
function leaves(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [prefix];
  const keys = Object.keys(value);
  if (keys.length === 0) return [`${prefix}.*`];
  return keys.flatMap((key) => leaves((value as Record<string, unknown>)[key], prefix ? `${prefix}.${key}` : key));
}

function names(variables: TemplateVariables, path: string): boolean {
  if (!path) return false;
  if (lookup(variables, path) !== undefined) return true;
  // below an open object (a webhook's body): any path
  return leaves(variables).some((leaf) => leaf.endsWith('.*') && path.startsWith(leaf.slice(0, -1)));
}

/** A warning for each tag of a trigger's prompt that names no variable of its source nor of a manual fire. */
export function promptVariableWarnings(triggers: readonly NormalizedTrigger[], document: unknown): ManifestIssue[] {
  const entries = (document as { triggers?: unknown } | null)?.triggers;
  const manual = manualVariables({ slug: 'sample', type: 'cron' }, { actor: 'sample', firedAt: SAMPLE_AT });
  const warnings: ManifestIssue[] = [];
  for (const trigger of triggers) {
    const own = sourceVariables(trigger.type);
    const unknown = [...new Set(templatePaths(trigger.prompt))].filter((path) => !names(own, path) && !names(manual, path));
    if (unknown.length === 0) continue;
    const index = Array.isArray(entries) ? entries.findIndex((e) => (e as { slug?: unknown } | null)?.slug === trigger.slug) : -1;
    const ownLeaves = leaves(own);
    const manualOnly = leaves(manual).filter((leaf) => !ownLeaves.includes(leaf));
    for (const path of unknown) {
      warnings.push({
        path: index >= 0 ? `/triggers/${index}/prompt` : '/triggers',
        message: `{{ ${path} }} names no variable of a ${trigger.type} fire and renders empty; it has ${ownLeaves.join(', ')} (fired by hand also ${manualOnly.join(', ')})`,
      });
    }
  }
  return warnings;
}
