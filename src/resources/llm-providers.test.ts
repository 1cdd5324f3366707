import { describe, expect, it } from 'vitest';
import {
  LLM_PROVIDERS_ANNOTATION, llmApiKeyProblem, llmProvider, llmProviderInfos, llmProviderNameProblem, llmProvidersEnv,
  llmProvidersSecretName, normalizeBaseUrl, providerDefaults, withLlmProvider, withoutLlmProvider,
} from './llm-providers.js';
import type { Project } from './project.js';

const project: Project = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: 'web', namespace: 'default', uid: 'e1f2a3b4-0000-4000-8000-000000000001' },
  spec: { repoUrl: 'https://example.com/r.git', defaultBranch: 'main' } as Project['spec'],
};
const NOW = new Date('2026-03-01T10:00:00Z');

describe('provider rules', () => {
  it('names are slugs', () => {
    expect(llmProviderNameProblem('openai')).toBeNull();
    expect(llmProviderNameProblem('local-llm_2')).toBeNull();
    expect(llmProviderNameProblem('Local')).toMatch(/slug/);
    expect(llmProviderNameProblem('a:b')).toMatch(/slug/);
    expect(llmProviderNameProblem('')).toMatch(/slug/);
  });

  it('defaults the base URL and protocol of the built-in names only', () => {
    expect(providerDefaults('openai', undefined, undefined)).toEqual({ protocol: 'openai', base_url: 'https://api.openai.com/v1' });
    expect(providerDefaults('anthropic', undefined, undefined)).toEqual({ protocol: 'anthropic', base_url: 'https://api.anthropic.com/v1' });
    expect(providerDefaults('local', undefined, undefined)).toEqual({ problem: expect.stringMatching(/base_url is required/) });
    expect(providerDefaults('local', undefined, 'http://127.0.0.1:9000/v1/')).toEqual({ protocol: 'openai', base_url: 'http://127.0.0.1:9000/v1' });
    expect(providerDefaults('proxy', 'anthropic', 'https://llm.corp/anthropic')).toEqual({ protocol: 'anthropic', base_url: 'https://llm.corp/anthropic' });
  });

  it('refuses base URLs with credentials, queries or other schemes', () => {
    expect(normalizeBaseUrl('https://u:p@host/v1')).toEqual({ problem: expect.stringMatching(/credentials/) });
    expect(normalizeBaseUrl('https://host/v1?key=x')).toEqual({ problem: expect.stringMatching(/query/) });
    expect(normalizeBaseUrl('file:///etc')).toEqual({ problem: expect.stringMatching(/http/) });
    expect(normalizeBaseUrl('not a url')).toEqual({ problem: expect.stringMatching(/not a URL/) });
  });

  it('keys are non-empty header-safe text', () => {
    expect(llmApiKeyProblem('sk-abc123')).toBeNull();
    expect(llmApiKeyProblem('')).toMatch(/empty/);
    expect(llmApiKeyProblem('sk\r\nX-Evil: 1')).toMatch(/printable/);
    expect(llmApiKeyProblem('x'.repeat(9000))).toMatch(/at most/);
  });
});

describe('the providers Secret', () => {
  it('keeps the key in data and the rest in the listing annotation', () => {
    const one = withLlmProvider(project, undefined, { name: 'openai', protocol: 'openai', base_url: 'https://api.openai.com/v1', api_key: 'sk-1' }, NOW);
    expect(one.metadata.name).toBe(llmProvidersSecretName(project));
    expect(one.metadata.name).toBe('web-llm-providers');
    expect(one.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Project', uid: project.metadata.uid, controller: true });
    expect(one.metadata.labels).toEqual({ 'svc.dev/project': 'web', 'svc.dev/llm-providers': 'true' });
    expect(Buffer.from(one.data!.openai!, 'base64').toString()).toBe('sk-1');
    expect(one.metadata.annotations![LLM_PROVIDERS_ANNOTATION]).not.toContain('sk-1');
    const two = withLlmProvider(project, { ...one, metadata: { ...one.metadata, resourceVersion: '7' } }, { name: 'local', protocol: 'openai', base_url: 'http://127.0.0.1:1/v1', api_key: 'k2' }, NOW);
    expect(two.metadata.resourceVersion).toBe('7');
    expect(llmProviderInfos(two)).toEqual([
      { name: 'local', protocol: 'openai', base_url: 'http://127.0.0.1:1/v1', updated_at: NOW.toISOString() },
      { name: 'openai', protocol: 'openai', base_url: 'https://api.openai.com/v1', updated_at: NOW.toISOString() },
    ]);
    expect(llmProvider(two, 'local')?.api_key).toBe('k2');
    expect(llmProvider(two, 'nope')).toBeUndefined();
    expect(llmProvidersEnv(llmProviderInfos(two))).toBe('local:openai,openai:openai');
    const removed = withoutLlmProvider(two, 'openai')!;
    expect(llmProviderInfos(removed).map((p) => p.name)).toEqual(['local']);
    expect(removed.data).toEqual({ local: two.data!.local });
    expect(withoutLlmProvider(removed, 'openai')).toBeNull();
    expect(withoutLlmProvider(undefined, 'openai')).toBeNull();
  });

  it('ignores listing entries without a key and a broken annotation', () => {
    const secret = { metadata: { annotations: { [LLM_PROVIDERS_ANNOTATION]: '{"a":{"protocol":"openai","base_url":"http://x"}}' } }, data: {} };
    expect(llmProviderInfos(secret)).toEqual([]);
    expect(llmProviderInfos({ metadata: { annotations: { [LLM_PROVIDERS_ANNOTATION]: '{' } }, data: { a: 'eA==' } })).toEqual([]);
    expect(llmProvidersEnv([])).toBe('');
  });
});
