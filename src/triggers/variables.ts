// Template variables per fire source (SPEC §6): every fire has `trigger.*`; the rest depends on
// the source, with no combined set (a cron fire has no top-level `fired_at`).
export type TemplateVariables = Record<string, unknown>;

interface TriggerLike { slug: string; type: 'cron' | 'webhook' }

function base(trigger: TriggerLike): TemplateVariables {
  return { trigger: { slug: trigger.slug, type: trigger.type, kind: 'git' } };
}

export interface CronFireInput {
  /** The expression that fired (a run-once trigger: its run_at instant). */
  schedule: string;
  timezone: string;
  firedAt: Date;
  lastFiredAt?: Date | null;
}

export function cronVariables(trigger: TriggerLike, input: CronFireInput): TemplateVariables {
  return {
    ...base(trigger),
    cron: {
      schedule: input.schedule,
      timezone: input.timezone,
      fired_at: input.firedAt.toISOString(),
      last_fired_at: input.lastFiredAt ? input.lastFiredAt.toISOString() : '',
    },
  };
}

export interface WebhookFireInput {
  rawBody: Buffer;
  /** Request headers, lower-case names (node's IncomingHttpHeaders). */
  headers: Record<string, string | string[] | undefined>;
  firedAt: Date;
}

/**
 * The deepest JSON body kept as JSON: a fire's variables are serialized again (the TriggerFire,
 * the prompt), and a few thousand nested arrays, which parse, overflow the stack there: the fire
 * was never recorded. Real payloads nest a dozen levels.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * The JSON-parsed body, or `{ raw }` when it is not JSON (or nests deeper than MAX_BODY_DEPTH). A
 * form whose one field `payload` holds a JSON object (GitHub's default content type for a
 * webhook, `application/x-www-form-urlencoded`) is that object's fields with `raw` beside them.
 */
export function webhookBody(rawBody: Buffer, contentType = ''): unknown {
  const raw = rawBody.toString('utf8');
  const parsed = parseJson(raw);
  if (parsed !== undefined) return parsed;
  const payload = /^application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType) ? formPayload(raw) : undefined;
  return payload ? { ...payload, raw } : { raw };
}

/** JSON within MAX_BODY_DEPTH, else undefined. */
function parseJson(text: string): unknown {
  try {
    const parsed = JSON.parse(text) as unknown;
    return depthOf(parsed) > MAX_BODY_DEPTH ? undefined : parsed;
  } catch {
    return undefined;
  }
}

/** The JSON object in a form's one field `payload`, else undefined. */
function formPayload(form: string): Record<string, unknown> | undefined {
  const fields = new URLSearchParams(form);
  if ([...fields.keys()].join() !== 'payload') return undefined;
  const payload = parseJson(fields.get('payload')!);
  return typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload as Record<string, unknown> : undefined;
}

/** How deep `value` nests (a scalar is 0), without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_BODY_DEPTH) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

const header = (headers: WebhookFireInput['headers'], name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value ?? '';
};

export function webhookVariables(trigger: TriggerLike, input: WebhookFireInput): TemplateVariables {
  return {
    ...base(trigger),
    fired_at: input.firedAt.toISOString(),
    body: webhookBody(input.rawBody, header(input.headers, 'content-type')),
    headers: {
      content_type: header(input.headers, 'content-type'),
      user_agent: header(input.headers, 'user-agent'),
      forwarded_for: header(input.headers, 'x-forwarded-for'),
    },
  };
}

export interface ManualFireInput {
  actor: string;
  message?: { text: string; source?: string };
  firedAt: Date;
}

export function manualVariables(trigger: TriggerLike, input: ManualFireInput): TemplateVariables {
  return {
    ...base(trigger),
    fired_at: input.firedAt.toISOString(),
    source: 'manual',
    actor: input.actor,
    message: { text: input.message?.text ?? '', source: input.message?.source ?? '' },
  };
}
