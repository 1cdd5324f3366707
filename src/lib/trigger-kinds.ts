// Trigger vocabulary shared by the manifest (what a user writes) and the resources (what the
// controllers store): declared once here, where both may import it.
export const TRIGGER_TYPES = ['cron', 'webhook'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export const SESSION_MODES = ['fresh', 'reuse'] as const;
export type SessionMode = (typeof SESSION_MODES)[number];
