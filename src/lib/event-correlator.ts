// Events bounded as Kubernetes bounds them (client-go's EventCorrelator, tools/record/events_cache.go):
// - deduplication: a repeat of the same (source, object, type, reason, message) updates the Event
//   already written (count + 1, lastTimestamp) instead of creating another object;
// - aggregation: more than `maxSimilar` distinct messages for one (source, object, type, reason)
//   within `similarWindowMs` are combined into one Event "(combined from similar events): <latest>"
//   whose count grows;
// - both caches are LRUs of `cacheSize` entries, so memory stays bounded however many objects
//   come and go.
// The caches live in the writing process, as client-go's do; the API server's Event TTL
// (src/localcluster, kube-apiserver --event-ttl) bounds what remains.
// Writes for one key run one at a time (a burst of repeats is one create, then patches).
// I/O comes in as an EventSink, so the kube client and the node simulator share this logic.
import { randomBytes } from 'node:crypto';
import { KeyedMutex } from './keyed-mutex.js';
import { Lru } from './lru.js';
import { clipText } from './clip.js';

export interface EventObjectRef {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

/**
 * The longest Event message kept (characters): a message may carry what a sandbox reported (an
 * engine's error, a stall's reason), up to 256 KiB of it, and each distinct one is held in the
 * caches and written as its own Event. events.k8s.io bounds a note to 1 KiB; 4 KiB keeps ours whole.
 */
export const MAX_EVENT_MESSAGE = 4096;

export function clipEventMessage(message: string): string {
  return clipText(message, MAX_EVENT_MESSAGE);
}

export interface EventFacts {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** A core/v1 Event as written. */
export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace?: string };
  involvedObject: EventObjectRef;
  type: string;
  reason: string;
  message: string;
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  source: { component: string };
  reportingComponent: string;
}

export interface EventSink {
  create(event: CoreEvent): Promise<void>;
  /** Merge-patches the Event; false when it no longer exists (expired, deleted). */
  patch(namespace: string | undefined, name: string, patch: Partial<CoreEvent>): Promise<boolean>;
}

export interface EventCorrelatorOptions {
  /** Written as `source.component` and `reportingComponent`; part of every key. */
  component: string;
  /** Entries of each cache (client-go: 4096). */
  cacheSize?: number;
  /** Distinct messages of one (object, type, reason) before they are combined (client-go: 10). */
  maxSimilar?: number;
  /** How long similar events count together (client-go: 10 minutes). */
  similarWindowMs?: number;
  now?: () => Date;
}

export const COMBINED_PREFIX = '(combined from similar events): ';

interface SimilarRecord { messages: Set<string>; lastMs: number }
interface Written { name: string; namespace?: string; count: number; firstTimestamp: string }

/** Kubernetes time (seconds precision), as Event timestamps are written. */
function eventTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

export class EventCorrelator {
  private readonly similar: Lru<SimilarRecord>;
  private readonly written: Lru<Written>;
  private readonly maxSimilar: number;
  private readonly similarWindowMs: number;
  private readonly now: () => Date;
  private readonly lanes = new KeyedMutex();

  constructor(private readonly sink: EventSink, private readonly options: EventCorrelatorOptions) {
    const size = options.cacheSize ?? 4096;
    this.similar = new Lru(size);
    this.written = new Lru(size);
    this.maxSimilar = options.maxSimilar ?? 10;
    this.similarWindowMs = options.similarWindowMs ?? 600_000;
    this.now = options.now ?? (() => new Date());
  }

  /** Entries held in the caches (bounded by 2 × cacheSize). */
  cacheEntries(): number {
    return this.similar.size + this.written.size;
  }

  /** Writes `facts` about `object`: a new Event, or a count on the one already written for it. */
  record(object: EventObjectRef, facts: EventFacts): Promise<void> {
    const { key, message } = this.correlate(object, { ...facts, message: clipEventMessage(facts.message) });
    return this.lanes.run(key, () => this.write(key, object, { ...facts, message }));
  }

  /** The dedup key and the message to write (combined once the similar ones are too many). */
  private correlate(object: EventObjectRef, facts: EventFacts): { key: string; message: string } {
    const similarKey = [this.options.component, object.apiVersion, object.kind, object.namespace, object.name, object.uid, facts.type, facts.reason].join('\u0000');
    const nowMs = this.now().getTime();
    let record = this.similar.get(similarKey);
    if (!record || nowMs - record.lastMs > this.similarWindowMs) record = { messages: new Set(), lastMs: nowMs };
    record.lastMs = nowMs;
    this.similar.set(similarKey, record);
    record.messages.add(facts.message);
    // a message already known keeps its own Event; a new one beyond the limit is combined
    if (record.messages.size < this.maxSimilar) return { key: `${similarKey}\u0000${facts.message}`, message: facts.message };
    record.messages.delete(facts.message); // the set stays below the limit (client-go pops one)
    return { key: similarKey, message: COMBINED_PREFIX + facts.message };
  }

  private async write(key: string, object: EventObjectRef, facts: EventFacts): Promise<void> {
    const now = eventTime(this.now());
    const previous = this.written.get(key);
    if (previous) {
      const count = previous.count + 1;
      if (await this.sink.patch(previous.namespace, previous.name, { count, lastTimestamp: now, message: facts.message })) {
        this.written.set(key, { ...previous, count });
        return;
      }
      this.written.delete(key); // gone (expired): start a new one
    }
    const event: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${object.name}.${randomBytes(8).toString('hex')}`, namespace: object.namespace },
      involvedObject: object,
      type: facts.type,
      reason: facts.reason,
      message: facts.message,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      source: { component: this.options.component },
      reportingComponent: this.options.component,
    };
    await this.sink.create(event);
    this.written.set(key, { name: event.metadata.name, namespace: object.namespace, count: 1, firstTimestamp: now });
  }
}
