// Trigger entries (SPEC §2.5): one zod schema for the entry rules, plus the rules that need the
// whole document (unique slugs, agents of version 2), and the normalization of a valid entry.
import * as z from 'zod';
import { cronProblem, isIanaZone } from './cron.js';
import { ALWAYS, isRecord, namesList, nonEmptyString, report, secretEnvName, shownName, slug, whenPresent } from './rules.js';
import { SESSION_MODES, TRIGGER_TYPES, type SessionMode, type TriggerType } from '../lib/trigger-kinds.js';

/** Canonical field -> its alias. The parser and the validator accept both spellings, never both at once. */
export const TRIGGER_ALIASES = {
  prompt: 'prompt_template',
  agent: 'agent_name',
  session_mode: 'sessionMode',
  cron: 'schedule',
  run_at: 'runAt',
  secret_env: 'secretEnv',
} as const;
type Canonical = keyof typeof TRIGGER_ALIASES;

export interface NormalizedTrigger {
  slug: string;
  type: TriggerType;
  name: string;
  prompt: string;
  agent: string;
  model?: string;
  session_mode: SessionMode;
  enabled: boolean;
  cron?: string;
  run_at?: string;
  timezone: string;
  secret_env?: string;
}

const cronExpression = () =>
  z.string().superRefine((expr, ctx) => {
    const problem = cronProblem(expr);
    if (problem) report(ctx, [], problem);
  });

const instant = () =>
  z.iso.datetime({
    offset: true,
    error: 'must be an ISO 8601 instant with a time zone, such as 2030-01-31T09:00:00Z or 2030-01-31T10:00:00+01:00',
  });

const sessionMode = () =>
  z.string().refine((s) => (SESSION_MODES as readonly string[]).includes(s.toLowerCase()), {
    error: 'must be fresh or reuse (any case)',
  });

const withAlias = <T extends z.ZodType>(field: Canonical, schema: () => T) => ({
  [field]: schema().optional(),
  [TRIGGER_ALIASES[field]]: schema().optional(),
});

const MODEL_PATTERN = /^[^/\s]+\/\S+$/;

/** The entry rules that need nothing outside the entry. */
export const triggerEntrySchema = z
  .looseObject({
    slug: slug(),
    type: z.enum(TRIGGER_TYPES, { error: whenPresent('must be cron or webhook') }),
    name: z.string().optional(),
    model: z.string().regex(MODEL_PATTERN, { error: 'must have the form <provider>/<model>, such as anthropic/claude-sonnet-4' }).optional(),
    enabled: z.boolean({ error: 'must be true or false' }).optional(),
    timezone: z.string().refine(isIanaZone, { error: 'must be an IANA time zone name, such as UTC or Europe/Paris' }).optional(),
    ...withAlias('prompt', nonEmptyString),
    ...withAlias('agent', nonEmptyString),
    ...withAlias('session_mode', sessionMode),
    ...withAlias('cron', cronExpression),
    ...withAlias('run_at', instant),
    ...withAlias('secret_env', secretEnvName),
  })
  .superRefine((entry, ctx) => {
    if (!isRecord(entry)) return;
    for (const [field, alias] of Object.entries(TRIGGER_ALIASES)) {
      if (entry[field] !== undefined && entry[alias] !== undefined) {
        report(ctx, [alias], `is an alias of ${field}: set only one of ${field} and ${alias}`);
      }
    }
    const has = (field: Canonical) => entry[field] !== undefined || entry[TRIGGER_ALIASES[field]] !== undefined;
    if (!has('prompt')) report(ctx, ['prompt'], 'is required (alias prompt_template): the first message of the session');
    if (entry.type === 'cron') {
      if (!has('cron') && !has('run_at')) {
        report(ctx, ['cron'], 'a cron trigger needs cron (alias schedule) or run_at (alias runAt)');
      } else if (has('cron') && has('run_at')) {
        report(ctx, [entry.run_at !== undefined ? 'run_at' : 'runAt'], 'cron and run_at are mutually exclusive: set one of them');
      }
    }
    if (entry.type === 'webhook' && !has('secret_env')) {
      report(ctx, ['secret_env'], 'a webhook trigger needs secret_env (alias secretEnv), the name of the project secret that authenticates it');
    }
  }, ALWAYS);

/** The value of `field` under its canonical name or its alias. */
export function triggerField(entry: Record<string, unknown>, field: Canonical): unknown {
  return entry[field] ?? entry[TRIGGER_ALIASES[field]];
}

/** What the entry rules that look outside the entry need to know about the document. */
export interface TriggerContext {
  version: 1 | 2 | null;
  agentNames: ReadonlySet<string> | null; // keys of `agents` in version 2
  /** The agent names as messages list them (namesList). */
  knownAgents: string;
  defaultAgent: string | undefined;
}

export function triggerContext(doc: unknown): TriggerContext {
  const d = isRecord(doc) ? doc : {};
  const version = d.svc_version === 1 || d.svc_version === 2 ? d.svc_version : null;
  return {
    version,
    agentNames: version === 2 && isRecord(d.agents) ? new Set(Object.keys(d.agents)) : null,
    knownAgents: version === 2 && isRecord(d.agents) ? namesList(Object.keys(d.agents)) : '',
    defaultAgent: typeof d.default_agent === 'string' && d.default_agent !== '' ? d.default_agent : undefined,
  };
}

/** default_agent of a version 2 manifest (the agent of a trigger or session that names none), else undefined. */
function defaultAgentOf(context: TriggerContext): string | undefined {
  return context.version === 2 ? context.defaultAgent : undefined;
}

/** default_agent of a version 2 manifest document, else undefined. */
export function manifestDefaultAgent(doc: unknown): string | undefined {
  return defaultAgentOf(triggerContext(doc));
}

export interface TriggerContextIssue { index: number; path: string[]; message: string }

/** Rules that need the other entries or the rest of the document: unique slugs, version 2 agents. */
export function triggerContextIssues(doc: unknown): TriggerContextIssue[] {
  const entries = isRecord(doc) && Array.isArray(doc.triggers) ? doc.triggers : [];
  const context = triggerContext(doc);
  const issues: TriggerContextIssue[] = [];
  const firstIndex = new Map<string, number>();
  entries.forEach((entry, index) => {
    if (!isRecord(entry)) return;
    if (typeof entry.slug === 'string') {
      const first = firstIndex.get(entry.slug);
      if (first === undefined) firstIndex.set(entry.slug, index);
      else issues.push({ index, path: ['slug'], message: `is already used by trigger ${first}: trigger slugs must be unique` });
    }
    if (context.agentNames) {
      const key = entry.agent !== undefined ? 'agent' : entry.agent_name !== undefined ? 'agent_name' : undefined;
      const known = context.knownAgents;
      if (key && typeof entry[key] === 'string' && !context.agentNames.has(entry[key])) {
        issues.push({ index, path: [key], message: `must name a key of agents (${known})` });
      } else if (!key && context.defaultAgent && !context.agentNames.has(context.defaultAgent)) {
        issues.push({ index, path: ['agent'], message: `is omitted, so it is default_agent ${shownName(context.defaultAgent)}, which is not a key of agents (${known})` });
      }
    }
  });
  return issues;
}

/** Resolves aliases and fills defaults of an entry that passed every rule. */
export function normalizeTrigger(entry: Record<string, unknown>, context: TriggerContext): NormalizedTrigger {
  const text = (field: Canonical) => triggerField(entry, field) as string | undefined;
  const slugValue = entry.slug as string;
  const normalized: NormalizedTrigger = {
    slug: slugValue,
    type: entry.type as NormalizedTrigger['type'],
    name: (entry.name as string | undefined) ?? slugValue,
    prompt: text('prompt')!,
    agent: text('agent') ?? defaultAgentOf(context) ?? 'default',
    session_mode: (text('session_mode')?.toLowerCase() ?? 'fresh') as NormalizedTrigger['session_mode'],
    enabled: (entry.enabled as boolean | undefined) ?? true,
    timezone: (entry.timezone as string | undefined) ?? 'UTC',
  };
  if (typeof entry.model === 'string') normalized.model = entry.model;
  const cron = text('cron');
  const runAt = text('run_at');
  const secretEnv = text('secret_env');
  if (cron !== undefined) normalized.cron = cron.trim().split(/\s+/).join(' ');
  if (runAt !== undefined) normalized.run_at = new Date(runAt).toISOString();
  if (secretEnv !== undefined) normalized.secret_env = secretEnv;
  return normalized;
}
