// Triggers on the resource shape (TriggerEntry): the manifest conversion and the cron schedule.
export { triggerEntryFromManifest } from './entry.js';
export { nextCronFire, nextFire } from './cron.js';
