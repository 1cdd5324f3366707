// Points the engine at the model gateway (DESIGN §8.2, docs/gateway.md "svc-agent"): when the
// sandbox has SVC_LLM_BASE_URL and the repository's engine config declares no provider of its
// own, opencode gets one provider per SVC_LLM_PROVIDERS entry (through OPENCODE_CONFIG_CONTENT,
// merged over the repository's config; nothing is written into the workspace), each with its
// base URL under the gateway and the session's key read from the environment
// (`{env:SVC_LLM_API_KEY}`: the key itself is in no file and no config text).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseRepoYaml, readRepoFile } from './repo-yaml.js';
import { httpCall } from '../src/lib/http-call.js';

export type GatewayProtocol = 'openai' | 'anthropic';
export interface GatewayProvider { name: string; protocol: GatewayProtocol }

export interface GatewaySettings {
  /** SVC_LLM_BASE_URL, without a trailing slash */
  baseUrl: string;
  providers: GatewayProvider[];
}

const ENTRY = /^([a-z0-9][a-z0-9_-]{0,127}):(openai|anthropic)$/;
const KEY_REFERENCE = '{env:SVC_LLM_API_KEY}';

/** SVC_LLM_PROVIDERS (`name:protocol,...`); malformed entries are left out (and named). */
export function parseProviders(value: string): { providers: GatewayProvider[]; ignored: string[] } {
  const providers: GatewayProvider[] = [];
  const ignored: string[] = [];
  for (const entry of value.split(',').map((e) => e.trim()).filter(Boolean)) {
    const m = ENTRY.exec(entry);
    if (m && !providers.some((p) => p.name === m[1])) providers.push({ name: m[1]!, protocol: m[2] as GatewayProtocol });
    else ignored.push(entry);
  }
  return { providers, ignored };
}

/** JSON with comments and trailing commas (opencode.jsonc), as opencode reads it. */
export function parseJsonc(text: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      i += 2;
      while (i < text.length && !(text[i] === '*' && text[i + 1] === '/')) i++;
      i++;
    } else {
      out += c;
    }
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, '$1'));
}

type Json = Record<string, unknown>;

/** The opencode configs a repository carries: its engine config dir's and its root's. */
export function repositoryEngineConfigs(configDir: string, workspace: string): Json[] {
  const files = [configDir, workspace, path.join(workspace, '.opencode')]
    .flatMap((dir) => ['opencode.json', 'opencode.jsonc'].map((f) => path.join(dir, f)));
  const configs: Json[] = [];
  for (const file of [...new Set(files)]) {
    if (!existsSync(file)) continue;
    try {
      const parsed = parseJsonc(readFileSync(file, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) configs.push(parsed as Json);
    } catch { /* opencode says what is wrong with it */ }
  }
  return configs;
}

/** `model:` of the agent files (`<config dir>/agents/*.md`, opencode's `agent/*.md` too). */
export function agentFileModels(configDir: string): string[] {
  const models: string[] = [];
  for (const sub of ['agents', 'agent']) {
    const dir = path.join(configDir, sub);
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.md'));
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(readRepoFile(path.join(dir, name)) ?? '');
        const front = m ? (parseRepoYaml(m[1]!) as { model?: unknown } | null) : null;
        if (typeof front?.model === 'string') models.push(front.model);
      } catch { /* a broken file: the manifest check reports it */ }
    }
  }
  return models;
}

/** The models the repository's configs name (`model`, `small_model`, agents' `model`). */
function configModels(configs: readonly Json[]): string[] {
  const out: string[] = [];
  for (const c of configs) {
    for (const key of ['model', 'small_model']) if (typeof c[key] === 'string') out.push(c[key] as string);
    const agents = c.agent;
    if (typeof agents === 'object' && agents !== null) {
      for (const a of Object.values(agents as Record<string, unknown>)) {
        const model = (a as { model?: unknown } | null)?.model;
        if (typeof model === 'string') out.push(model);
      }
    }
  }
  return out;
}

/** True when a repository config declares a provider of its own: then the gateway is not injected. */
export function declaresProviders(configs: readonly Json[]): boolean {
  return configs.some((c) => typeof c.provider === 'object' && c.provider !== null && Object.keys(c.provider).length > 0);
}

export interface EngineConfigInput {
  gateway: GatewaySettings;
  /** what the repository's configs say */
  configs: Json[];
  /** SVC_ENGINE_MODEL (the session's or the trigger's model) */
  engineModel?: string;
  /** the agent files' models */
  agentModels: string[];
  /** model ids a provider's GET models answered (for providers nothing names a model of) */
  discovered: Record<string, string[]>;
}

const split = (ref: string): [string, string] | null => {
  const slash = ref.indexOf('/');
  return slash > 0 && slash < ref.length - 1 ? [ref.slice(0, slash), ref.slice(slash + 1)] : null;
};

/** Providers opencode knows from its catalog: they keep their own SDK and models; the gateway only changes where they go. */
const CATALOG: Record<string, GatewayProtocol> = { openai: 'openai', anthropic: 'anthropic' };

/**
 * The config that routes opencode through the gateway, or null when the repository declares its
 * own providers. Every model the session can be asked for (SVC_ENGINE_MODEL, the repository's
 * `model`, the agent files') is declared under its provider; `model` is set when the repository
 * does not set one, so opencode never falls back to a provider outside the gateway, and only the
 * gateway's providers are enabled.
 */
export function gatewayEngineConfig(input: EngineConfigInput): Json | null {
  if (declaresProviders(input.configs) || input.gateway.providers.length === 0) return null;
  const refs = [input.engineModel, ...configModels(input.configs), ...input.agentModels].filter((r): r is string => !!r);
  const named = new Map<string, string[]>();
  for (const ref of refs) {
    const parts = split(ref);
    if (!parts) continue;
    const list = named.get(parts[0]) ?? [];
    if (!list.includes(parts[1])) list.push(parts[1]);
    named.set(parts[0], list);
  }
  const provider: Json = {};
  let firstModel: string | undefined;
  for (const p of input.gateway.providers) {
    const builtin = CATALOG[p.name] === p.protocol;
    const models = named.get(p.name) ?? (builtin ? [] : input.discovered[p.name] ?? []);
    firstModel ??= models[0] === undefined ? undefined : `${p.name}/${models[0]}`;
    provider[p.name] = {
      ...(builtin ? {} : { npm: p.protocol === 'anthropic' ? '@ai-sdk/anthropic' : '@ai-sdk/openai-compatible', name: `${p.name} (svc model gateway)` }),
      options: { baseURL: `${input.gateway.baseUrl}/${p.name}`, apiKey: KEY_REFERENCE },
      ...(models.length > 0 ? { models: Object.fromEntries(models.map((m) => [m, { name: m, tool_call: true }])) } : {}),
    };
  }
  const config: Json = { provider, enabled_providers: input.gateway.providers.map((p) => p.name) };
  const repoModel = input.configs.some((c) => typeof c.model === 'string');
  const sessionModel = input.engineModel && split(input.engineModel) && input.gateway.providers.some((p) => p.name === split(input.engineModel!)![0]) ? input.engineModel : undefined;
  if (!repoModel && (sessionModel ?? firstModel)) config.model = sessionModel ?? firstModel;
  return config;
}

/** A provider's model ids through the gateway (GET <base>/<name>/models), [] when it cannot say. */
export async function discoverModels(gateway: GatewaySettings, provider: GatewayProvider, key: string, timeoutMs = 5000): Promise<string[]> {
  try {
    const headers: Record<string, string> = provider.protocol === 'anthropic'
      ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' }
      : { authorization: `Bearer ${key}` };
    const res = await httpCall(`${gateway.baseUrl}/${provider.name}/models`, { headers, timeoutMs });
    if (res.status !== 200) return [];
    const body = JSON.parse(res.body) as { data?: { id?: unknown }[] };
    return (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string').slice(0, 50);
  } catch {
    return [];
  }
}
