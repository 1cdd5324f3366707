// The engine's root session (SPEC §2.6 SVC_BOOTSTRAP_ENGINE_SESSION): created or opened at every
// cold boot; the initial prompt is sent on the session's first boot only. A marker file in the
// engine home (which survives daemon restarts, like the engine's own store) records both; the
// engine's own store is the second witness when the marker was lost (the root is found by its
// title, the prompt by a user message in it).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EngineSupervisor } from './engine.js';
import { makeDirs } from '../src/lib/make-dirs.js';

interface Marker {
  svc_session_id: string;
  root_session_id: string;
  initial_prompt_sent_at: string | null;
}

export interface RootSessionOptions {
  stateDir: string;
  sessionId: string;
  agentName: string | undefined;
  engineModel: string | undefined;
  initialPrompt: string | undefined;
}

export class RootSession {
  id: string | null = null;
  initialPromptSentAt: string | null = null;
  /** Why the last bootstrap failed (the engine died or refused); null once it succeeded. */
  lastError: string | null = null;
  private readonly markerPath: string;

  constructor(private readonly engine: EngineSupervisor, private readonly options: RootSessionOptions) {
    this.markerPath = path.join(options.stateDir, 'root-session.json');
  }

  private get title(): string {
    return `svc session ${this.options.sessionId}`;
  }

  private readMarker(): Marker | null {
    try {
      const m = JSON.parse(readFileSync(this.markerPath, 'utf8')) as Marker;
      return m.svc_session_id === this.options.sessionId && typeof m.root_session_id === 'string' ? m : null;
    } catch {
      return null;
    }
  }

  private writeMarker(marker: Marker): void {
    makeDirs(path.dirname(this.markerPath), 0o700);
    const tmp = `${this.markerPath}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(marker, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.markerPath);
  }

  /** This daemon has an initial prompt the engine has not been given yet. */
  get promptPending(): boolean {
    return Boolean(this.options.initialPrompt) && this.initialPromptSentAt === null;
  }

  /** Opened, and the initial prompt (if any) sent: nothing left to bootstrap. */
  get settled(): boolean {
    return this.id !== null && !this.promptPending;
  }

  hasMarker(): boolean {
    return this.readMarker() !== null;
  }

  /**
   * Makes `id` the root session before the engine starts (a conversation restored from a
   * checkpoint): bootstrap then opens it; the initial prompt counts as sent when it has a user message.
   */
  adopt(id: string): void {
    this.writeMarker({ svc_session_id: this.options.sessionId, root_session_id: id, initial_prompt_sent_at: null });
  }

  /**
   * Creates or opens the root session and sends the initial prompt once. Throws on engine errors
   * (kept in `lastError`); a later call takes up where this one stopped.
   */
  async bootstrap(): Promise<void> {
    try {
      await this.open();
      this.lastError = null;
    } catch (err) {
      this.lastError = (err as Error).message;
      throw err;
    }
  }

  private async open(): Promise<void> {
    let marker = this.readMarker();
    if (marker) {
      const existing = await this.engine.call('GET', `/session/${encodeURIComponent(marker.root_session_id)}`);
      if (existing.status !== 200) marker = null; // the engine's store lost it: start a new root
    }
    if (!marker) {
      // the marker was lost but the engine's store was not: adopt the root by its title
      const listed = await this.engine.call('GET', '/session');
      const found = Array.isArray(listed.body) ? listed.body.find((s: { id?: unknown; title?: unknown }) => s?.title === this.title && typeof s.id === 'string') : undefined;
      if (found) {
        marker = { svc_session_id: this.options.sessionId, root_session_id: (found as { id: string }).id, initial_prompt_sent_at: null };
        this.writeMarker(marker);
      }
    }
    if (!marker) {
      const created = await this.engine.call('POST', '/session', { title: this.title });
      const id = (created.body as { id?: unknown } | null)?.id;
      if (created.status !== 200 || typeof id !== 'string') throw new Error(`engine refused to create the root session (${created.status})`);
      marker = { svc_session_id: this.options.sessionId, root_session_id: id, initial_prompt_sent_at: null };
      this.writeMarker(marker);
    }
    this.id = marker.root_session_id;
    this.initialPromptSentAt = marker.initial_prompt_sent_at;
    if (!this.options.initialPrompt || marker.initial_prompt_sent_at) return;
    if (await this.hasUserMessage(marker.root_session_id)) {
      this.markSent(marker);
      return;
    }
    const sent = await this.engine.call('POST', `/session/${encodeURIComponent(marker.root_session_id)}/prompt_async`, {
      ...(await this.agentField()),
      ...modelField(this.options.engineModel),
      parts: [{ type: 'text', text: this.options.initialPrompt }],
    });
    if (sent.status !== 204 && sent.status !== 200) throw new Error(`engine refused the initial prompt (${sent.status})`);
    this.markSent(marker);
  }

  private markSent(marker: Marker): void {
    marker.initial_prompt_sent_at = new Date().toISOString();
    this.writeMarker(marker);
    this.initialPromptSentAt = marker.initial_prompt_sent_at;
  }

  private async hasUserMessage(id: string): Promise<boolean> {
    const r = await this.engine.call('GET', `/session/${encodeURIComponent(id)}/message`);
    return r.status === 200 && Array.isArray(r.body)
      && r.body.some((m: { info?: { role?: string } }) => m?.info?.role === 'user');
  }

  /** The agent is named only when the engine knows it; otherwise the engine's default agent runs. */
  private async agentField(): Promise<{ agent?: string }> {
    const name = this.options.agentName;
    if (!name) return {};
    const agents = await this.engine.call('GET', '/agent');
    const known = Array.isArray(agents.body) && agents.body.some((a: { name?: string }) => a?.name === name);
    if (!known) process.stderr.write(`svc-agent: the engine has no agent named ${JSON.stringify(name)}; using its default agent\n`);
    return known ? { agent: name } : {};
  }

  /** Aborts the current run of the root session. */
  async abort(): Promise<{ status: number; body: unknown }> {
    if (!this.id) throw new Error('no root session');
    return this.engine.call('POST', `/session/${encodeURIComponent(this.id)}/abort`);
  }

  /** The root session's run status from the engine: idle, busy or retry (offline retries forever). */
  async runStatus(timeoutMs = 10_000): Promise<Record<string, unknown>> {
    if (!this.id) return { type: 'none' };
    const r = await this.engine.call('GET', '/session/status', undefined, timeoutMs);
    const status = r.status === 200 && r.body && typeof r.body === 'object' ? (r.body as Record<string, unknown>)[this.id] : undefined;
    return status && typeof status === 'object' ? status as Record<string, unknown> : { type: 'idle' };
  }
}

/** SVC_ENGINE_MODEL is `provider/model`. */
export function modelField(model: string | undefined): { model?: { providerID: string; modelID: string } } {
  const slash = model?.indexOf('/') ?? -1;
  if (!model || slash <= 0 || slash === model.length - 1) return {};
  return { model: { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) } };
}
