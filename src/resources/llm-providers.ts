// The model gateway's provider keys (DESIGN §8.2, docs/gateway.md). Pure: the API's gateway
// routes write the Secret, the API's data path reads it, the Sandbox controller reads only the
// listing annotation (names and protocols, for SVC_LLM_PROVIDERS). No sandbox ever receives it.
//   Secret     `<project>-llm-providers`, owned by the Project, labelled svc.dev/project=<project>
//              and svc.dev/llm-providers=true (what the API's cache watches)
//   data       one key per provider name: the provider's API key (base64 as Kubernetes stores it)
//   annotation `svc.dev/llm-providers`: JSON { name: { protocol, base_url, updated_at } }
import { LABEL_PROJECT } from './constants.js';
import { SLUG_PATTERN } from './common.js';
import { controllerReference, type KubeObject } from './meta.js';
import type { Project } from './project.js';
import { withoutTrailingSlashes } from '../lib/trailing-slashes.js';

export const LLM_PROTOCOLS = ['openai', 'anthropic'] as const;
export type LlmProtocol = (typeof LLM_PROTOCOLS)[number];

/** Built-in providers: the base URL and protocol a name gets when the request does not say. */
export const BUILTIN_LLM_PROVIDERS: Readonly<Record<string, { protocol: LlmProtocol; base_url: string }>> = {
  openai: { protocol: 'openai', base_url: 'https://api.openai.com/v1' },
  anthropic: { protocol: 'anthropic', base_url: 'https://api.anthropic.com/v1' },
};

export const LABEL_LLM_PROVIDERS = 'svc.dev/llm-providers';
export const LLM_PROVIDERS_ANNOTATION = 'svc.dev/llm-providers';
export const MAX_LLM_API_KEY_BYTES = 8 * 1024;
const MAX_BASE_URL_LENGTH = 2048;

export interface LlmProvidersSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** What GET /gateway/providers answers per provider: never the key. */
export interface LlmProviderInfo {
  name: string;
  protocol: LlmProtocol;
  base_url: string;
  updated_at: string | null;
}

/** A provider with its key: only the API's data path holds this. */
export interface LlmProvider extends LlmProviderInfo {
  api_key: string;
}

export function llmProvidersSecretName(project: Pick<Project, 'metadata'>): string {
  return `${project.metadata.name}-llm-providers`;
}

export function llmProviderNameProblem(name: string): string | null {
  return SLUG_PATTERN.test(name) ? null : `provider name ${JSON.stringify(name)} must be a slug (${SLUG_PATTERN.source}), e.g. openai, anthropic or local-llm`;
}

export function isLlmProtocol(value: unknown): value is LlmProtocol {
  return typeof value === 'string' && (LLM_PROTOCOLS as readonly string[]).includes(value);
}

/** The base URL normalized (no trailing slash), or a problem: http(s), no credentials, no query or fragment. */
export function normalizeBaseUrl(value: string): { url: string } | { problem: string } {
  if (value.length > MAX_BASE_URL_LENGTH) return { problem: `base_url has at most ${MAX_BASE_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: `base_url ${JSON.stringify(value)} is not a URL (e.g. https://api.openai.com/v1)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'base_url must be an http:// or https:// URL' };
  if (url.username || url.password) return { problem: 'base_url may not carry credentials: the key goes in api_key' };
  if (url.search || url.hash || value.includes('?') || value.includes('#')) return { problem: 'base_url may not have a query or a fragment' };
  return { url: withoutTrailingSlashes(url.toString()) };
}

/** Why `key` cannot be a provider key (it goes into an HTTP header), or null. */
export function llmApiKeyProblem(key: string): string | null {
  if (key.length === 0) return 'api_key may not be empty';
  if (Buffer.byteLength(key, 'utf8') > MAX_LLM_API_KEY_BYTES) return `api_key has at most ${MAX_LLM_API_KEY_BYTES} bytes`;
  if (!/^[\x21-\x7e]+$/.test(key)) return 'api_key must be printable ASCII without spaces (it is sent in an HTTP header)';
  return null;
}

/** The protocol and base URL a provider gets: the request's, else the built-in defaults of its name. */
export function providerDefaults(name: string, protocol: LlmProtocol | undefined, baseUrl: string | undefined): { protocol: LlmProtocol; base_url: string } | { problem: string } {
  const builtin = BUILTIN_LLM_PROVIDERS[name];
  const chosen = protocol ?? builtin?.protocol ?? 'openai';
  if (baseUrl === undefined) {
    if (!builtin) return { problem: `base_url is required for provider ${name} (only openai and anthropic have a default)` };
    return { protocol: chosen, base_url: builtin.base_url };
  }
  const normalized = normalizeBaseUrl(baseUrl);
  return 'problem' in normalized ? normalized : { protocol: chosen, base_url: normalized.url };
}

type Listing = Record<string, { protocol: LlmProtocol; base_url: string; updated_at: string | null }>;

function listing(secret: LlmProvidersSecret | undefined): Listing {
  const raw = secret?.metadata.annotations?.[LLM_PROVIDERS_ANNOTATION];
  if (!raw) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    const out: Listing = {};
    for (const [name, v] of Object.entries(parsed as Record<string, unknown>)) {
      const entry = v as { protocol?: unknown; base_url?: unknown; updated_at?: unknown } | null;
      if (llmProviderNameProblem(name) || !entry || !isLlmProtocol(entry.protocol) || typeof entry.base_url !== 'string') continue;
      out[name] = { protocol: entry.protocol, base_url: entry.base_url, updated_at: typeof entry.updated_at === 'string' ? entry.updated_at : null };
    }
    return out;
  } catch {
    return {};
  }
}

/** The providers a Secret lists, sorted by name (those whose key is missing are left out). */
export function llmProviderInfos(secret: LlmProvidersSecret | undefined): LlmProviderInfo[] {
  const data = secret?.data ?? {};
  return Object.entries(listing(secret))
    .filter(([name]) => typeof data[name] === 'string')
    .map(([name, entry]) => ({ name, ...entry }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** One provider with its key, or undefined. */
export function llmProvider(secret: LlmProvidersSecret | undefined, name: string): LlmProvider | undefined {
  const info = llmProviderInfos(secret).find((p) => p.name === name);
  const key = secret?.data?.[name];
  return info && key !== undefined ? { ...info, api_key: Buffer.from(key, 'base64').toString('utf8') } : undefined;
}

/** SVC_LLM_PROVIDERS: `name:protocol,...` (sorted by name), '' without providers. */
export function llmProvidersEnv(providers: readonly Pick<LlmProviderInfo, 'name' | 'protocol'>[]): string {
  return providers.map((p) => `${p.name}:${p.protocol}`).join(',');
}

function withListing(secret: LlmProvidersSecret, entries: Listing): LlmProvidersSecret {
  const sorted = Object.fromEntries(Object.entries(entries).sort(([a], [b]) => a.localeCompare(b)));
  return { ...secret, metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, [LLM_PROVIDERS_ANNOTATION]: JSON.stringify(sorted) } } };
}

/** The Secret with `provider` set at `now`: `existing` changed (resourceVersion kept as the precondition), or a new one owned by the Project. */
export function withLlmProvider(project: Project, existing: LlmProvidersSecret | undefined, provider: Omit<LlmProvider, 'updated_at'>, now: Date): LlmProvidersSecret {
  const base: LlmProvidersSecret = existing ?? {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: llmProvidersSecretName(project),
      namespace: project.metadata.namespace,
      labels: { [LABEL_PROJECT]: project.metadata.name!, [LABEL_LLM_PROVIDERS]: 'true' },
      ownerReferences: [controllerReference(project)],
    },
    type: 'Opaque',
    data: {},
  };
  const next = { ...base, data: { ...base.data, [provider.name]: Buffer.from(provider.api_key, 'utf8').toString('base64') } };
  return withListing(next, { ...listing(base), [provider.name]: { protocol: provider.protocol, base_url: provider.base_url, updated_at: now.toISOString() } });
}

/** The Secret without `name`, or null when it has no such provider. */
export function withoutLlmProvider(existing: LlmProvidersSecret | undefined, name: string): LlmProvidersSecret | null {
  const entries = listing(existing);
  if (!existing || (!(name in entries) && !(name in (existing.data ?? {})))) return null;
  const data = { ...existing.data };
  delete data[name];
  delete entries[name];
  return withListing({ ...existing, data }, entries);
}
