// Pure trigger logic on the resource shape (TriggerEntry): the manifest conversion, templates,
// variables per source, webhook authentication, schedules.
export { triggerEntryFromManifest } from './entry.js';
export { lookup, renderPrefix, renderTemplate } from './template.js';
export { cronVariables, manualVariables, webhookBody, webhookVariables, type CronFireInput, type ManualFireInput, type TemplateVariables, type WebhookFireInput } from './variables.js';
export { authenticateWebhook, presentedToken, signWebhookBody, type WebhookAuthResult } from './webhook-auth.js';
export { DEFAULT_CATCH_UP_MS, decide, nextCronInstant, scheduleKey, zoneOffsetMinutes, type DecideOptions, type ScheduleDecision, type ScheduleSpec, type ScheduleState } from './schedule.js';
export { nextCronFire, nextFire } from './cron.js';
