// The engine's conversation across stop and wake (docs/sessions.md "The conversation"): saved with
// every checkpoint as files (one per message, so unchanged messages are unchanged blobs), and
// handed back to a fresh engine home before the engine starts, so that the root session the
// daemon adopts on boot is the old conversation.
// For opencode (measured on 1.18.33) the supported way both ways: its export format
// (`opencode export`: `{ info, messages: [{ info, parts }] }`), read from the running server
// (`GET /session/:id`, `GET /session/:id/message`, `GET /session/:id/todo`), and `opencode import
// <file>` run with the engine's environment and working directory before `opencode serve` starts.
// Secret values the sandbox holds are replaced before anything leaves the sandbox.
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ConversationFile, ConversationStore } from './checkpoint.js';
import type { EngineLaunch, EngineSupervisor } from './engine.js';
import type { RootSession } from './root-session.js';

export const FORMAT = 'opencode-export/1';
const SESSION_FILE = 'session.json';
/** Secret values shorter than this are not replaced (they would match ordinary text). */
const MIN_SECRET_LENGTH = 6;

export interface ConversationOptions {
  stateDir: string;
  /** the import command, `{file}` replaced; null: the engine cannot import */
  importCommand: string[] | null;
  /** the engine's command, working directory and environment (the import runs with the same) */
  launch: () => EngineLaunch;
  /** values never to save (tokens, project secrets) */
  secrets: () => string[];
}

/** Replaces every secret value inside the strings of a JSON value. */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  const values = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return values.reduce((text, secret) => text.split(secret).join('[secret removed by svc]'), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

export class Conversation implements ConversationStore {
  constructor(
    private readonly engine: EngineSupervisor,
    private readonly rootSession: RootSession,
    private readonly options: ConversationOptions,
  ) {}

  async export(): Promise<ConversationFile[] | null> {
    const id = this.rootSession.id;
    if (!id || this.engine.state !== 'ready') {
      if (id) throw new Error(`the engine is ${this.engine.state}`);
      return null;
    }
    const at = `/session/${encodeURIComponent(id)}`;
    const [info, messages, todos] = await Promise.all([
      this.engine.call('GET', at, undefined, 5_000),
      this.engine.call('GET', `${at}/message`, undefined, 10_000),
      this.engine.call('GET', `${at}/todo`, undefined, 5_000).catch(() => ({ status: 0, body: null })),
    ]);
    if (info.status !== 200 || !info.body || typeof info.body !== 'object') throw new Error(`the engine answered ${info.status} for its root session`);
    if (messages.status !== 200 || !Array.isArray(messages.body)) throw new Error(`the engine answered ${messages.status} for the root session's messages`);
    const secrets = this.options.secrets();
    const files: ConversationFile[] = [{
      name: SESSION_FILE,
      content: JSON.stringify(scrub({ format: FORMAT, info: info.body, todos: todos.status === 200 && Array.isArray(todos.body) ? todos.body : [] }, secrets)),
    }];
    messages.body.forEach((message: unknown, i: number) => {
      files.push({ name: `message-${String(i).padStart(6, '0')}.json`, content: JSON.stringify(scrub(message, secrets)) });
    });
    return files;
  }

  needsRestore(): boolean {
    return this.rootSession.id === null && !this.rootSession.hasMarker();
  }

  async restore(files: ConversationFile[]): Promise<{ sessionId: string; messages: number }> {
    const sessionFile = files.find((f) => f.name === SESSION_FILE);
    if (!sessionFile) throw new Error(`no ${SESSION_FILE} in the saved conversation`);
    const saved = JSON.parse(sessionFile.content) as { format?: unknown; info?: { id?: unknown }; todos?: unknown };
    if (saved.format !== FORMAT) throw new Error(`the saved conversation has format ${JSON.stringify(saved.format)}, not ${FORMAT}`);
    const sessionId = saved.info?.id;
    if (typeof sessionId !== 'string' || !sessionId) throw new Error('the saved conversation names no session');
    const messages = files.filter((f) => f.name.startsWith('message-')).sort((a, b) => a.name.localeCompare(b.name)).map((f) => JSON.parse(f.content) as unknown);
    const command = this.options.importCommand;
    if (!command) throw new Error('the engine command has no import form (set SVC_ENGINE_IMPORT_COMMAND)');
    const file = path.join(this.options.stateDir, `conversation-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ info: saved.info, messages, todos: saved.todos ?? [] }), { mode: 0o600 });
    try {
      await this.run(command.map((word) => word.replaceAll('{file}', file)));
    } finally {
      rmSync(file, { force: true });
    }
    this.rootSession.adopt(sessionId);
    return { sessionId, messages: messages.length };
  }

  private run(argv: string[]): Promise<void> {
    const launch = this.options.launch();
    const [command, ...args] = argv as [string, ...string[]];
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { cwd: launch.cwd, env: launch.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      const keep = (d: Buffer) => { if (output.length < 4000) output += d.toString(); };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      const timer = setTimeout(() => {
        try { process.kill(-child.pid!, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
        reject(new Error('the engine import did not finish in 120 s'));
      }, 120_000);
      child.on('error', (err) => { clearTimeout(timer); reject(new Error(`cannot run ${command}: ${err.message}`)); });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(`${path.basename(command)} import exited ${code}: ${output.trim().slice(-500)}`));
      });
    });
  }
}
