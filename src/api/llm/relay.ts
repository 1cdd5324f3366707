// The model gateway's data path (DESIGN §8.2, docs/gateway.md): a sandbox's request
// `POST {SVC_LLM_BASE_URL}/<provider>/<upstream path>` with the session's key, relayed to the
// provider's `<base_url>/<upstream path>` with the project's real key, the answer streamed back as
// it comes. Everything the decision needs is in memory (informer caches), so a request is not
// slowed by the API server; only a project with a budget reads its counters fresh.
import { Agent, request as upstreamRequest, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { llmKeySession, verifyLlmKey } from '../../lib/llm-key.js';
import { llmMetrics } from '../../lib/metrics.js';
import {
  controllerOf, dayKey, sessionCredentialsLive, ledgerBudget, ledgerCounters, llmLedgerName, llmProvider, llmSessionUsageName, monthKey, parseSessionUsage,
  periodTokens, tokensOf,
  type LlmBudget, type LlmProtocol, type LlmProvider, type LlmUsageRecord, type Project, type Session,
} from '../../resources/index.js';
import { ApiError } from '../errors.js';
import type { UsageRecorder } from '../gateway/recorder.js';
import type { GatewayStore } from '../gateway/store.js';
import type { BudgetHints } from '../gateway/budget-hints.js';
import { JsonTap, SseTap, UsageMeter } from './usage-tap.js';

/** A request the gateway let in: the session's project, the session, its trigger. */
export interface LlmCaller {
  project: Project;
  session: Session;
  trigger: string | null;
}

export interface LlmRelayOptions {
  store: GatewayStore;
  recorder: UsageRecorder;
  budgetHints: BudgetHints;
  /** Namespace (account) of the projects. */
  namespace: string;
  /** Largest request body relayed (default 32 MiB). */
  maxRequestBytes?: number;
  now?: () => Date;
  log?: (message: string) => void;
  dispatcher?: Dispatcher;
}

/** 429 `{ error, code: "BUDGET_EXCEEDED" }`; a period budget also says when it starts again (Retry-After). */
export class BudgetExceeded extends ApiError {
  constructor(message: string, readonly retryAfterSeconds: number | null) {
    super(429, message, 'BUDGET_EXCEEDED');
  }
}

/** What each protocol relays: completions and model listings, nothing that spends outside the count (files, batches, fine-tuning). */
const ROUTES: Record<LlmProtocol, { method: string; path: RegExp }[]> = {
  openai: [
    { method: 'POST', path: /^(chat\/completions|completions|responses|embeddings)$/ },
    { method: 'GET', path: /^models(\/[A-Za-z0-9._:@+-]+)?$/ },
  ],
  anthropic: [
    { method: 'POST', path: /^messages(\/count_tokens)?$/ },
    { method: 'GET', path: /^models(\/[A-Za-z0-9._:@+-]+)?$/ },
  ],
};

/**
 * The endpoint a relayed path names: the path itself, or what follows a leading `v1/`, so that a
 * provider whose `base_url` stops at the host (`http://models.internal:8000`) is called as its
 * clients call it (`/v1/llm/<name>/v1/chat/completions`). The path goes upstream unchanged.
 */
export function endpointOf(path: string): string {
  return path.startsWith('v1/') ? path.slice(3) : path;
}

export function routeProblem(protocol: LlmProtocol, method: string, path: string): { status: number; message: string } | null {
  const routes = ROUTES[protocol];
  const byPath = routes.filter((r) => r.path.test(endpointOf(path)));
  if (byPath.length === 0) {
    const served = protocol === 'openai' ? 'POST chat/completions, completions, responses, embeddings; GET models' : 'POST messages, messages/count_tokens; GET models';
    return { status: 404, message: `the model gateway relays ${served} for ${protocol} providers, not ${JSON.stringify(path)}` };
  }
  if (!byPath.some((r) => r.method === method)) return { status: 405, message: `${path} is served for ${byPath.map((r) => r.method).join(', ')} only` };
  return null;
}

/**
 * The session key is refused once its session's credentials are (DESIGN §8.1), and already from
 * the moment a stop is asked for: a stopping sandbox may still push its checkpoint, never spend.
 */
export function llmKeyLive(session: Session): boolean {
  return session.spec.desiredState !== 'stopped' && sessionCredentialsLive(session);
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** Request headers never passed upstream: the caller's credentials, the hop's own, what the gateway sets itself. */
const DROPPED_REQUEST = new Set([
  'host', 'authorization', 'x-api-key', 'cookie', 'content-length', 'accept-encoding', 'expect', 'forwarded',
  'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'proxy-authorization',
]);

function connectionListed(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  const text = Array.isArray(value) ? value.join(',') : value ?? '';
  return new Set(text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
}

function upstreamHeaders(incoming: IncomingHttpHeaders, provider: LlmProvider, bodyLength: number | null): Record<string, string | string[]> {
  const listed = connectionListed(incoming);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || DROPPED_REQUEST.has(name) || name.startsWith('x-svc-')) continue;
    out[name] = value;
  }
  if (provider.protocol === 'anthropic') out['x-api-key'] = provider.api_key;
  else out.authorization = `Bearer ${provider.api_key}`;
  out['accept-encoding'] = 'identity'; // the gateway reads the usage from the answer
  if (bodyLength !== null) out['content-length'] = String(bodyLength);
  return out;
}

function clientHeaders(upstream: Record<string, string | string[] | undefined>, rewritten: boolean): Record<string, string | string[]> {
  const listed = connectionListed(upstream as IncomingHttpHeaders);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || name === 'set-cookie') continue;
    if (rewritten && name === 'content-length') continue;
    out[name] = value;
  }
  return out;
}

/** The body as a buffer, at most `limit` bytes (413 beyond). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new ApiError(413, `request body is larger than the gateway's limit of ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ApiError(413, `request body is larger than the gateway's limit of ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

interface PreparedBody {
  bytes: Buffer;
  model: string | null;
  /** The gateway asked for the stream's usage: take out what that adds. */
  strip: boolean;
}

/**
 * The body to send upstream: unchanged, unless it is an OpenAI-style streaming completion that
 * does not ask for its usage; then `stream_options.include_usage` is added (DESIGN §8.2).
 */
export function prepareBody(protocol: LlmProtocol, path: string, body: Buffer, contentType: string | undefined): PreparedBody {
  if (body.length === 0 || !/json/i.test(contentType ?? 'application/json')) return { bytes: body, model: null, strip: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { bytes: body, model: null, strip: false }; // the upstream says what is wrong with it
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { bytes: body, model: null, strip: false };
  const obj = parsed as Record<string, unknown>;
  // what the client names is stored and labelled: bounded
  const model = typeof obj.model === 'string' ? obj.model.slice(0, MAX_MODEL_NAME) : null;
  const options = obj.stream_options;
  const asked = typeof options === 'object' && options !== null && (options as Record<string, unknown>).include_usage === true;
  const endpoint = endpointOf(path);
  if (protocol === 'openai' && (endpoint === 'chat/completions' || endpoint === 'completions') && obj.stream === true && !asked) {
    const streamOptions = typeof options === 'object' && options !== null && !Array.isArray(options) ? options : {};
    const bytes = Buffer.from(JSON.stringify({ ...obj, stream_options: { ...streamOptions, include_usage: true } }), 'utf8');
    return { bytes, model, strip: true };
  }
  return { bytes: body, model, strip: false };
}

const MAX_MODEL_NAME = 200;
/** Distinct model labels per process: an agent naming random models must not grow /metrics without bound. */
const MAX_MODEL_LABELS = 200;
const modelLabels = new Set<string>();

export function modelLabel(model: string | null): string {
  const name = model ?? '';
  if (modelLabels.has(name)) return name;
  if (modelLabels.size >= MAX_MODEL_LABELS) return 'other';
  modelLabels.add(name);
  return name;
}

/** Seconds until the budget's period starts again (a Retry-After), or null for budgets that never reset. */
function secondsToNextPeriod(period: LlmBudget['period'], now: Date): number | null {
  if (period === 'total') return null;
  const next = period === 'day'
    ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
    : Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export class LlmRelay {
  private readonly dispatcher: Dispatcher;
  private readonly now: () => Date;
  private readonly log: (message: string) => void;
  /** Sessions already told (an Event) about a budget: one Event per session, budget and period. */
  private readonly warned = new Set<string>();

  constructor(private readonly options: LlmRelayOptions) {
    // no redirects (the key would follow them); long waits are normal for a model
    this.dispatcher = options.dispatcher ?? new Agent({ headersTimeout: 600_000, bodyTimeout: 600_000, keepAliveTimeout: 30_000 });
    this.now = options.now ?? (() => new Date());
    this.log = options.log ?? ((m) => console.error(m));
  }

  /** The session's key as `Authorization: Bearer` or `x-api-key`; 401 when missing, wrong or dead. */
  authenticate(headers: IncomingHttpHeaders): LlmCaller {
    const { store, namespace } = this.options;
    const bearer = /^Bearer[ ]+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
    const apiKey = typeof headers['x-api-key'] === 'string' ? headers['x-api-key'].trim() : undefined;
    const key = [bearer, apiKey].find((k) => k !== undefined && llmKeySession(k) !== undefined);
    if (!bearer && !apiKey) throw new ApiError(401, 'missing model-gateway key: send Authorization: Bearer $SVC_LLM_API_KEY (or x-api-key)');
    const refused = () => new ApiError(401, 'the model-gateway key is wrong, or its session is stopped or failed');
    const sessionId = key && llmKeySession(key);
    if (!key || !sessionId) throw refused();
    const session = store.cachedSession(namespace, sessionId);
    const token = store.cachedSandboxToken(namespace, sessionId);
    const project = session ? store.cachedProjectByName(namespace, session.spec.projectRef.name) : undefined;
    const owner = session && controllerOf(session);
    if (!session || !token || !project || project.metadata.deletionTimestamp || (owner && owner.uid !== project.metadata.uid)) throw refused();
    if (!verifyLlmKey(key, token, project.metadata.uid!, sessionId) || !llmKeyLive(session)) throw refused();
    const triggerName = session.spec.triggerRef?.name;
    return { project, session, trigger: triggerName ? store.cachedTriggerSlug(namespace, triggerName) ?? triggerName : null };
  }

  provider(caller: LlmCaller, name: string): LlmProvider {
    const provider = llmProvider(this.options.store.cachedProviders(caller.project), name);
    if (!provider) throw new ApiError(404, `project ${caller.project.metadata.name} has no model gateway provider ${JSON.stringify(name)} (SVC_LLM_PROVIDERS lists them)`);
    return provider;
  }

  /** 429 BUDGET_EXCEEDED before anything reaches the provider, when the project's period or the session is at or past its budget. */
  async checkBudget(caller: LlmCaller, provider: LlmProvider): Promise<void> {
    const { store, recorder, budgetHints } = this.options;
    const { project, session } = caller;
    if (!ledgerBudget(store.cachedLedger(project)) && !budgetHints.recent(project.metadata.uid!)) return;
    // a budget applies: the counters as the cluster has them now (all replicas), plus what this replica has not written yet
    const fresh = await store.readConfigMap(project.metadata.namespace!, llmLedgerName(project));
    const budget = ledgerBudget(fresh);
    if (!budget) return;
    const now = this.now();
    if (budget.max_tokens !== null) {
      const used = periodTokens(ledgerCounters(fresh), budget.period, now) + recorder.pendingProjectTokens(project.metadata.uid!);
      if (used >= budget.max_tokens) {
        const periodName = budget.period === 'total' ? 'total' : `${budget.period} (UTC)`;
        const periodKey = budget.period === 'day' ? dayKey(now) : budget.period === 'month' ? monthKey(now) : 'total';
        this.refuse(caller, provider, `project:${budget.period}:${periodKey}:${budget.max_tokens}`,
          `the project's ${periodName} budget of ${budget.max_tokens} tokens is used up (${used} used)`, secondsToNextPeriod(budget.period, now));
      }
    }
    if (budget.max_tokens_per_session !== null) {
      const usage = parseSessionUsage(await store.readConfigMap(session.metadata.namespace!, llmSessionUsageName(session.metadata.name!)));
      const used = tokensOf(usage) + recorder.pendingSessionTokens(session.metadata.uid!);
      if (used >= budget.max_tokens_per_session) {
        this.refuse(caller, provider, `session:${budget.max_tokens_per_session}`, `this session's budget of ${budget.max_tokens_per_session} tokens is used up (${used} used)`, null);
      }
    }
  }

  private refuse(caller: LlmCaller, provider: LlmProvider, budgetKey: string, why: string, retryAfter: number | null): never {
    const { project, session } = caller;
    llmMetrics().requests.inc({ project: project.metadata.name!, provider: provider.name, status: '429' });
    const warnKey = `${session.metadata.uid}:${budgetKey}`;
    if (!this.warned.has(warnKey)) {
      this.warned.add(warnKey);
      if (this.warned.size > 10_000) this.warned.delete(this.warned.values().next().value!);
      void this.options.store.recordEvent(session, {
        type: 'Warning', reason: 'BudgetExceeded',
        message: `model requests refused: ${why}; a person can raise it with svc gateway budget (or wait for the next period)`,
      }).catch((error: Error) => this.log(`model gateway: recording BudgetExceeded failed: ${error.message}`));
    }
    throw new BudgetExceeded(`budget exceeded: ${why}`, retryAfter);
  }

  /** Relays the request and streams the answer; records what it cost once the answer ended (or the client left). */
  async relay(req: IncomingMessage, res: ServerResponse, caller: LlmCaller, provider: LlmProvider, path: string, query: string): Promise<void> {
    const started = Date.now();
    const at = this.now().toISOString();
    const method = req.method ?? 'GET';
    const body = method === 'POST' ? await readBody(req, this.options.maxRequestBytes ?? 32 * 1024 * 1024) : Buffer.alloc(0);
    await this.checkBudget(caller, provider);
    const prepared = prepareBody(provider.protocol, path, body, req.headers['content-type']);
    const labels = { project: caller.project.metadata.name!, provider: provider.name };
    const meter = new UsageMeter();
    const abort = new AbortController();
    const onClose = () => { if (!res.writableFinished) abort.abort(); };
    res.on('close', onClose);
    let status = 502;
    try {
      let answer: Dispatcher.ResponseData;
      try {
        answer = await upstreamRequest(`${provider.base_url}/${path}${query}`, {
          method: method as Dispatcher.HttpMethod,
          headers: upstreamHeaders(req.headers, provider, method === 'POST' ? prepared.bytes.length : null),
          body: method === 'POST' ? prepared.bytes : undefined,
          dispatcher: this.dispatcher,
          signal: abort.signal,
        });
      } catch (error) {
        if (abort.signal.aborted) {
          status = 499; // the client left before the provider answered
          return;
        }
        throw new ApiError(502, `the provider ${provider.name} could not be reached: ${(error as Error).message}`);
      }
      status = answer.statusCode;
      const isStream = /text\/event-stream/i.test(String(answer.headers['content-type'] ?? ''));
      // an upstream that compressed anyway (identity was asked) passes untouched and uncounted
      const encoding = String(answer.headers['content-encoding'] ?? 'identity').toLowerCase();
      const readable = encoding === 'identity';
      if (!readable) this.log(`model gateway: ${provider.name} answered with Content-Encoding ${encoding}: its usage cannot be read`);
      const strip = prepared.strip && isStream && readable && answer.statusCode < 300;
      const tap = !readable ? null : isStream ? new SseTap(meter, strip) : new JsonTap(meter);
      let first = true;
      try {
        res.writeHead(answer.statusCode, clientHeaders(answer.headers, strip));
        res.flushHeaders();
        for await (const chunk of answer.body) {
          if (first) {
            llmMetrics().firstByte.observe(labels, (Date.now() - started) / 1000);
            first = false;
          }
          const out = tap ? tap.push(chunk as Buffer) : (chunk as Buffer);
          if (out.length > 0 && !res.write(out)) await once(res, 'drain', { signal: abort.signal }); // a client that left ends the wait
        }
        res.end(tap ? tap.end() : undefined);
        if (tap?.unread) this.log(`model gateway: ${provider.name} sent an answer past 16 MiB or a stream event past 16 Mi characters: it passed unread, its usage not counted`);
      } catch {
        // the upstream failed after the answer started, the client left, or its headers could not
        // be relayed: cut both connections
        answer.body.destroy();
        res.destroy();
      }
    } finally {
      res.off('close', onClose);
      this.count(caller, provider, { at, status, model: prepared.model, meter, started });
    }
  }

  private count(caller: LlmCaller, provider: LlmProvider, done: { at: string; status: number; model: string | null; meter: UsageMeter; started: number }): void {
    const { project, session, trigger } = caller;
    const durationMs = Date.now() - done.started;
    const record: LlmUsageRecord = {
      at: done.at, session_id: session.metadata.name!, trigger, provider: provider.name, model: done.model,
      status: done.status, ...done.meter.counts(), duration_ms: durationMs,
    };
    const m = llmMetrics();
    const labels = { project: project.metadata.name!, provider: provider.name };
    m.requests.inc({ ...labels, status: String(done.status) });
    m.duration.observe(labels, durationMs / 1000);
    const model = record.input_tokens > 0 || record.output_tokens > 0 ? modelLabel(done.model) : '';
    if (record.input_tokens > 0) m.tokens.inc({ ...labels, model, direction: 'input' }, record.input_tokens);
    if (record.output_tokens > 0) m.tokens.inc({ ...labels, model, direction: 'output' }, record.output_tokens);
    this.options.recorder.record(project, session, record);
  }
}
