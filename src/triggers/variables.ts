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

/** The JSON-parsed body, or `{ raw }` when it is not JSON. */
export function webhookBody(rawBody: Buffer): unknown {
  const raw = rawBody.toString('utf8');
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return { raw };
  }
}

const header = (headers: WebhookFireInput['headers'], name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value ?? '';
};

export function webhookVariables(trigger: TriggerLike, input: WebhookFireInput): TemplateVariables {
  return {
    ...base(trigger),
    fired_at: input.firedAt.toISOString(),
    body: webhookBody(input.rawBody),
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
