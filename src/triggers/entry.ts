// The one conversion from a manifest trigger entry (snake_case, src/manifest) to the resource
// shape (TriggerEntry, camelCase, src/resources) that the Trigger resources and everything in
// src/triggers work on.
import type { NormalizedTrigger } from '../manifest/index.js';
import type { TriggerEntry } from '../resources/index.js';

/**
 * A normalized entry as a Trigger spec entry. Also takes a raw entry with the manifest's
 * aliases (`prompt_template`, `agent_name`, `sessionMode`, `schedule`, `runAt`, `secretEnv`)
 * and applies the same defaults (name = slug, agent `default`, `fresh`, enabled, UTC).
 */
export function triggerEntryFromManifest(entry: NormalizedTrigger | Readonly<Record<string, unknown>>): TriggerEntry {
  const raw = entry as Readonly<Record<string, unknown>>;
  const pick = (...keys: string[]) => keys.map((k) => raw[k]).find((v) => v !== undefined && v !== null);
  const out: Record<string, unknown> = {
    slug: raw.slug,
    type: raw.type,
    prompt: pick('prompt', 'prompt_template'),
    name: pick('name') ?? raw.slug,
    agent: pick('agent', 'agent_name') ?? 'default',
    sessionMode: String(pick('session_mode', 'sessionMode') ?? 'fresh').toLowerCase(),
    enabled: pick('enabled') ?? true,
    timezone: pick('timezone') ?? 'UTC',
  };
  const optional: [string, unknown][] = [
    ['model', pick('model')],
    ['cron', pick('cron', 'schedule')],
    ['runAt', pick('run_at', 'runAt')],
    ['secretEnv', pick('secret_env', 'secretEnv')],
  ];
  for (const [key, value] of optional) if (value !== undefined) out[key] = value;
  return out as TriggerEntry;
}
