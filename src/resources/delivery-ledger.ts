// The delivery ledger (DESIGN §8.4): a webhook delivery id stays deduplicated for 72 h after its
// fire, also once the fire itself was pruned. Before the Trigger controller deletes a fire that
// carries a delivery id, it writes the answer that delivery got into a page of its trigger:
//   page  ConfigMap `<trigger>-deliveries-<yyyymmddhh>-<n>` (owned by the Trigger, labels
//         svc.dev/ledger=deliveries and svc.dev/trigger=<trigger>): data `<fire name>` -> the 202
//         body of the first delivery (JSON, as sent); one page per hour of fire instants (UTC) and
//         as many as that hour needs, at most LEDGER_PAGE_ENTRIES entries each; annotation
//         svc.dev/expires-at = the end of that hour + 72 h, when the Trigger controller deletes it.
// So what the ledger holds is bounded by the deliveries of the last 72-73 hours.
import { CONFIG_MAP, LABEL_TRIGGER, type ResourceType } from './constants.js';
import type { ConfigMapObject } from './llm-usage.js';
import { controllerReference, type ObjectIndex } from './meta.js';
import { childName } from './names.js';
import type { Trigger } from './trigger.js';
import { parseFireAnswer, type FireAnswer } from './triggerfire.js';

export const LABEL_LEDGER = 'svc.dev/ledger';
/** The ledger pages and nothing else: the API and the operator cache only these ConfigMaps. */
export const DELIVERY_LEDGER: ResourceType = { ...CONFIG_MAP, labelSelector: `${LABEL_LEDGER}=deliveries` };
export const LEDGER_EXPIRES_ANNOTATION = 'svc.dev/expires-at';
/** `<yyyymmddhh>-<n>`: which page this is (names may be shortened, the annotation is not). */
export const LEDGER_PAGE_ANNOTATION = 'svc.dev/ledger-page';
/** How long a delivery id stays deduplicated after its fire. */
export const DELIVERY_DEDUP_MS = 72 * 3600_000;
/** Entries of one page (about 200 bytes each: some 50 KB, far below a ConfigMap's 1 MiB; a smaller page costs less to append to). */
export const LEDGER_PAGE_ENTRIES = 250;

/** A page by the fires it holds: `<namespace>/<fire name>`. */
export const LEDGER_ENTRY_INDEX: ObjectIndex<ConfigMapObject> = {
  name: 'ledger-entries',
  keys: (page) => Object.keys(page.data ?? {}).map((fire) => `${page.metadata.namespace ?? ''}/${fire}`),
};

/** The UTC hour of a fire instant, `yyyymmddhh`: the page group it is recorded in. */
export function ledgerHour(firedAt: string): string {
  return new Date(firedAt).toISOString().slice(0, 13).replace(/[-T]/g, '');
}

/** When the pages of `hour` (ledgerHour) may go: the end of that hour + 72 h. */
export function ledgerExpiry(hour: string): Date {
  const start = Date.UTC(Number(hour.slice(0, 4)), Number(hour.slice(4, 6)) - 1, Number(hour.slice(6, 8)), Number(hour.slice(8, 10)));
  return new Date(start + 3600_000 + DELIVERY_DEDUP_MS);
}

export function ledgerPageName(trigger: string, hour: string, page: number): string {
  return childName(trigger, `deliveries-${hour}-${page}`);
}

/** A new page of `trigger` for the fires of `hour`, holding `entries`. */
export function newLedgerPage(trigger: Trigger, hour: string, page: number, entries: Record<string, string>): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: ledgerPageName(trigger.metadata.name!, hour, page),
      namespace: trigger.metadata.namespace,
      labels: { [LABEL_LEDGER]: 'deliveries', [LABEL_TRIGGER]: trigger.metadata.name! },
      annotations: { [LEDGER_EXPIRES_ANNOTATION]: ledgerExpiry(hour).toISOString(), [LEDGER_PAGE_ANNOTATION]: `${hour}-${page}` },
      ownerReferences: [controllerReference(trigger)],
    },
    data: entries,
  };
}

/** The hour and number of a page, undefined for a ConfigMap that is not one. */
export function ledgerPageOf(page: ConfigMapObject): { hour: string; page: number } | undefined {
  const m = /^(\d{10})-(\d+)$/.exec(page.metadata.annotations?.[LEDGER_PAGE_ANNOTATION] ?? '');
  return m ? { hour: m[1]!, page: Number(m[2]) } : undefined;
}

/** When a page may be deleted (its annotation; a page without one expires at once). */
export function ledgerPageExpiry(page: ConfigMapObject): number {
  const at = Date.parse(page.metadata.annotations?.[LEDGER_EXPIRES_ANNOTATION] ?? '');
  return Number.isNaN(at) ? 0 : at;
}

/** The answer recorded for the fire named `fire` in one of `pages`. */
export function ledgerAnswer(pages: readonly ConfigMapObject[], fire: string): FireAnswer | undefined {
  for (const page of pages) {
    const answer = parseFireAnswer(page.data?.[fire]);
    if (answer) return answer;
  }
  return undefined;
}
