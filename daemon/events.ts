// The engine's event stream (`GET /event`, SSE): parsed into `{ type, properties }` events for
// the daemon's watchers (activity, progress, turn ends). One subscription per engine start;
// reconnected while the engine stays ready.
import type { EngineSupervisor } from './engine.js';
import { httpStream } from '../src/lib/http-call.js';
import { SseSplitter, eventData } from '../src/lib/sse.js';

export interface EngineEvent {
  type: string;
  properties: Record<string, unknown>;
}

export type EngineEventListener = (event: EngineEvent) => void;

/** The engine events of an SSE stream: the JSON payloads of its events' data (SseSplitter: linear, bounded). */
export class SseParser {
  private readonly splitter = new SseSplitter();

  push(chunk: Uint8Array | string): EngineEvent[] {
    const events: EngineEvent[] = [];
    for (const data of eventData(this.splitter.push(chunk))) {
      try {
        const parsed = JSON.parse(data) as { type?: unknown; properties?: unknown };
        if (typeof parsed?.type === 'string') {
          events.push({ type: parsed.type, properties: parsed.properties && typeof parsed.properties === 'object' ? parsed.properties as Record<string, unknown> : {} });
        }
      } catch { /* not JSON: not an engine event */ }
    }
    return events;
  }
}

export class EngineEvents {
  private controller: AbortController | null = null;
  private readonly listeners: EngineEventListener[] = [];
  /** any bytes at all arrived (counts as activity even when not a parsable event) */
  private readonly chunkListeners: Array<() => void> = [];

  constructor(private readonly engine: EngineSupervisor) {}

  on(listener: EngineEventListener): void {
    this.listeners.push(listener);
  }

  onChunk(listener: () => void): void {
    this.chunkListeners.push(listener);
  }

  /** Subscribes (again); called when the engine becomes ready. */
  subscribe(): void {
    this.close();
    const controller = new AbortController();
    this.controller = controller;
    void this.run(controller);
  }

  close(): void {
    this.controller?.abort();
    this.controller = null;
  }

  private async run(controller: AbortController): Promise<void> {
    while (!controller.signal.aborted && this.engine.state === 'ready') {
      try {
        const parser = new SseParser();
        await httpStream(`${this.engine.baseUrl}/event`, { authorization: this.engine.authorization }, controller.signal, (chunk) => {
          for (const listener of this.chunkListeners) listener();
          for (const event of parser.push(chunk)) {
            for (const listener of this.listeners) {
              try { listener(event); } catch (err) { process.stderr.write(`svc-agent: event listener: ${(err as Error).message}\n`); }
            }
          }
        });
      } catch { /* the engine went away or we closed */ }
      if (controller.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
