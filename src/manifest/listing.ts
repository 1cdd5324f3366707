// The lenient trigger listing (SPEC §2.5): every entry normalized or reported, on any parsed
// document, so that an invalid entry never hides the valid ones.
import { type ManifestCheck } from './check.js';
import { plainMessages, relativeMessage, toManifestIssues } from './issues.js';
import { isRecord } from './rules.js';
import { type NormalizedTrigger, triggerContext, triggerContextIssues, triggerEntrySchema, normalizeTrigger } from './trigger.js';
import { jsonPointer } from './issues.js';

export interface TriggerListingError { index: number; slug?: string; messages: string[] }
export interface TriggerListing { triggers: NormalizedTrigger[]; errors: TriggerListingError[] }

export function listTriggers(check: Pick<ManifestCheck, 'document'>): TriggerListing {
  const doc = check.document;
  const entries: unknown[] = isRecord(doc) && Array.isArray(doc.triggers) ? doc.triggers : [];
  const context = triggerContext(doc);
  const contextIssues = triggerContextIssues(doc);
  const listing: TriggerListing = { triggers: [], errors: [] };
  entries.forEach((entry, index) => {
    const result = triggerEntrySchema.safeParse(entry, { error: plainMessages });
    const messages = [
      ...(result.success ? [] : toManifestIssues(result.error.issues).map(relativeMessage)),
      ...contextIssues.filter((i) => i.index === index).map((i) => relativeMessage({ path: jsonPointer(i.path), message: i.message })),
    ];
    if (messages.length === 0 && isRecord(entry)) {
      listing.triggers.push(normalizeTrigger(entry, context));
      return;
    }
    const slug = isRecord(entry) && typeof entry.slug === 'string' ? entry.slug : undefined;
    listing.errors.push({ index, ...(slug !== undefined ? { slug } : {}), messages });
  });
  return listing;
}
