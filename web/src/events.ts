// The engine's event stream (opencode's `/event`, through the API's session proxy) as readable
// lines: assistant text, tool calls with their commands, errors. Pure: the SSE framing and the
// fold over events are unit-tested (events.test.ts); the page only feeds bytes in.
import { eventData, SseSplitter } from '../../src/lib/sse.js';
import { engineErrorText } from '../../src/lib/model-error.js';

/**
 * The data of each complete event of a stream, fed its chunks as they arrive: linear and bounded
 * (svc's one SSE splitter, src/lib/sse.ts). Splitting the whole buffer again on every chunk took
 * 36 s of the tab for one 32 MiB event a sandbox sent.
 */
export function sseDataReader(): (chunk: string) => string[] {
  const splitter = new SseSplitter();
  return (chunk) => [...eventData(splitter.push(chunk))];
}

export type ItemKind = 'text' | 'reasoning' | 'tool' | 'error' | 'status';

export interface EventItem {
  key: string;
  kind: ItemKind;
  /** The engine message the part belongs to (its role arrives in message.updated: `roleOf`). */
  messageID?: string;
  text: string;
  tool?: string;
  /** The command of a shell tool call, else its input as JSON. */
  input?: string;
  toolStatus?: string;
  output?: string;
}

export interface EventLog { items: EventItem[]; roles: Record<string, string>; status: string | null; count: number }

export const emptyLog = (): EventLog => ({ items: [], roles: {}, status: null, count: 0 });

interface Part {
  id?: string; messageID?: string; type?: string; text?: string; tool?: string;
  state?: { status?: string; input?: Record<string, unknown>; output?: string; error?: string; title?: string };
}

const MAX_ITEMS = 2000;
const MAX_OUTPUT = 4000;

function upsert(log: EventLog, item: EventItem): EventItem[] {
  const i = log.items.findIndex((x) => x.key === item.key);
  if (i >= 0) return [...log.items.slice(0, i), { ...log.items[i], ...item }, ...log.items.slice(i + 1)];
  return [...log.items, item].slice(-MAX_ITEMS);
}

function itemOfPart(part: Part): EventItem | null {
  const key = `part:${part.id ?? Math.random()}`;
  if (part.type === 'text' || part.type === 'reasoning') {
    return { key, kind: part.type, messageID: part.messageID, text: part.text ?? '' };
  }
  if (part.type === 'tool') {
    const input = part.state?.input ?? {};
    const command = typeof input.command === 'string' ? input.command : Object.keys(input).length ? JSON.stringify(input) : '';
    const output = part.state?.error ?? part.state?.output ?? '';
    return {
      key, kind: 'tool', text: part.state?.title ?? '', tool: part.tool ?? 'tool', input: command, toolStatus: part.state?.status,
      output: output.length > MAX_OUTPUT ? `${output.slice(0, MAX_OUTPUT)}\n… (${output.length - MAX_OUTPUT} more characters)` : output,
    };
  }
  return null;
}

const errorText = (error: unknown): string => engineErrorText(error) ?? 'the engine reported an error';

/** Folds one event (parsed JSON) into the log. Unknown events only count. */
export function applyEvent(log: EventLog, event: unknown): EventLog {
  const { type, properties: p = {} } = (event ?? {}) as { type?: string; properties?: Record<string, unknown> };
  const next = { ...log, count: log.count + 1 };
  switch (type) {
    case 'message.updated': {
      const info = p.info as { id?: string; role?: string } | undefined;
      if (!info?.id || !info.role) return next;
      return { ...next, roles: { ...log.roles, [info.id]: info.role } };
    }
    case 'message.part.updated': {
      const part = p.part as Part | undefined;
      if (!part) return next;
      const item = itemOfPart(part);
      return item ? { ...next, items: upsert(log, item) } : next;
    }
    case 'message.part.delta': {
      // newer engines stream text as deltas: { partID, field: "text", delta }
      const key = `part:${String(p.partID ?? '')}`;
      const current = log.items.find((x) => x.key === key);
      if (!current || p.field !== 'text' || typeof p.delta !== 'string') return next;
      return { ...next, items: upsert(log, { ...current, text: current.text + p.delta }) };
    }
    case 'session.error':
      return { ...next, items: upsert(log, { key: `error:${log.count}`, kind: 'error', text: errorText(p.error) }) };
    case 'session.status': {
      const status = (p.status as { type?: string } | undefined)?.type;
      return status ? { ...next, status } : next;
    }
    case 'session.idle':
      return { ...next, status: 'idle' };
    default:
      return next;
  }
}

/** `user`, `assistant`, or undefined while the message's role is not known yet. */
export function roleOf(log: EventLog, item: EventItem): string | undefined {
  return item.messageID ? log.roles[item.messageID] : undefined;
}
