// The lenient trigger listing (SPEC §2.5): every entry normalized or reported, on any parsed
// document, so that an invalid entry never hides the valid ones.
import { type ManifestCheck } from './check.js';
import { plainMessages, relativeMessage, toManifestIssues } from './issues.js';
import { isRecord, shownName } from './rules.js';
import { type NormalizedTrigger, triggerContext, triggerContextIssues, triggerEntrySchema, normalizeTrigger } from './trigger.js';
import { jsonPointer } from './issues.js';
import { KeyHints } from './suggest.js';

export interface TriggerListingError { index: number; slug?: string; messages: string[] }
export interface TriggerListing { triggers: NormalizedTrigger[]; errors: TriggerListingError[] }

/** The most invalid trigger entries a Project's status keeps (`status.triggerErrors`, the listing's `errors`). */
export const MAX_LISTED_TRIGGER_ERRORS = 100;
/**
 * The first MAX_LISTED_TRIGGER_ERRORS of `errors`, slugs cut as names are shown: a 1 MiB
 * manifest of `- {}` has 200,000 bad entries (30 MB of errors), which no status write may carry.
 */
export function listedTriggerErrors(errors: readonly TriggerListingError[]): TriggerListingError[] {
  return errors.slice(0, MAX_LISTED_TRIGGER_ERRORS).map((e) => (e.slug !== undefined ? { ...e, slug: shownName(e.slug) } : e));
}

export function listTriggers(check: Pick<ManifestCheck, 'document'>): TriggerListing {
  const doc = check.document;
  const entries: unknown[] = isRecord(doc) && Array.isArray(doc.triggers) ? doc.triggers : [];
  const context = triggerContext(doc);
  // each entry's context issues and the document's key hints, found once (per entry they made the listing quadratic)
  const contextIssues = new Map<number, ReturnType<typeof triggerContextIssues>>();
  for (const issue of triggerContextIssues(doc)) contextIssues.set(issue.index, [...(contextIssues.get(issue.index) ?? []), issue]);
  const hints = new KeyHints(doc);
  const listing: TriggerListing = { triggers: [], errors: [] };
  entries.forEach((entry, index) => {
    const result = triggerEntrySchema.safeParse(entry, { error: plainMessages });
    // with the entry's own path, so a misspelled key of this entry can be named ("did you mean cron?")
    const prefix = jsonPointer(['triggers', index]);
    const entryIssues = result.success ? [] : hints.apply(toManifestIssues(result.error.issues, ['triggers', index]));
    const messages = [
      ...entryIssues.map((i) => relativeMessage({ ...i, path: i.path.slice(prefix.length) })),
      ...(contextIssues.get(index) ?? []).map((i) => relativeMessage({ path: jsonPointer(i.path), message: i.message })),
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
