import { describe, expect, it } from 'vitest';
import { apiBaseUrl, envList, envMap, launchEnv, sessionEnv, type SessionEnvInput } from './env.js';

const SESSION = '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const PROJECT = 'e1f2a3b4-0000-4000-8000-000000000001';
const BASE: SessionEnvInput = {
  projectId: PROJECT,
  sessionId: SESSION,
  repoUrl: `http://127.0.0.1:8080/v1/projects/${PROJECT}/git`,
  defaultBranch: 'main',
  baseRef: 'release',
  apiUrl: 'http://127.0.0.1:8080/v1',
  agent: 'reviewer',
};
const SECRETS = { sandboxToken: `svcsbx.${SESSION}.${'a'.repeat(43)}`, cliToken: 'svc_cli', projectSecrets: {}, secretsRevision: '0' };

describe('sandbox environment (SPEC §2.6)', () => {
  it('carries every variable of the table, exactly', () => {
    const { env, secretEnv } = launchEnv(sessionEnv({ ...BASE, model: 'mock/m1', initialPrompt: 'fix the bug' }), { ...SECRETS, projectSecrets: { API_KEY: 'k1', DB_URL: 'postgres://x' }, secretsRevision: '42' });
    expect(env).toEqual({
      SVC_PROJECT_ID: PROJECT,
      SVC_SESSION_ID: SESSION,
      SVC_BRANCH_NAME: SESSION,
      SVC_HEAD_REF: SESSION,
      SVC_REPO_URL: BASE.repoUrl,
      SVC_DEFAULT_BRANCH: 'main',
      SVC_BASE_REF: 'release',
      SVC_SERVICE_PORT: '8000',
      SVC_API_URL: 'http://127.0.0.1:8080/v1',
      SVC_AGENT_NAME: 'reviewer',
      SVC_ENGINE_MODEL: 'mock/m1',
      SVC_INITIAL_PROMPT: 'fix the bug',
      SVC_PROJECT_AUTO_CLONE: '1',
      SVC_PROJECT_SECRET_NAMES: 'API_KEY,DB_URL',
      SVC_PROJECT_SECRETS_REVISION: '42',
      SVC_BOOTSTRAP_ENGINE_SESSION: '1',
    });
    expect(secretEnv).toEqual({
      API_KEY: 'k1',
      DB_URL: 'postgres://x',
      SVC_SANDBOX_TOKEN: SECRETS.sandboxToken,
      SVC_TOKEN: SECRETS.sandboxToken,
      SVC_CLI_TOKEN: 'svc_cli',
      SVC_EXECUTOR_TOKEN: 'svc_cli',
    });
    expect(Object.keys({ ...env, ...secretEnv })).not.toContain('SVC_WORKSPACE');
  });

  it.each([
    ['no model, no prompt (a wake)', {}, ['SVC_ENGINE_MODEL', 'SVC_INITIAL_PROMPT']],
    ['an empty prompt is no prompt', { initialPrompt: '' }, ['SVC_INITIAL_PROMPT']],
  ] as const)('leaves out what is not set: %s', (_name, extra, absent) => {
    const env = sessionEnv({ ...BASE, ...extra });
    for (const name of absent) expect(env).not.toHaveProperty(name);
  });

  it('SVC_CHECKPOINTS=0 only when the project turns checkpoints off (spec.checkpoints: false)', () => {
    expect(sessionEnv({ ...BASE, checkpoints: false }).SVC_CHECKPOINTS).toBe('0');
    expect(sessionEnv({ ...BASE, checkpoints: true })).not.toHaveProperty('SVC_CHECKPOINTS');
    expect(sessionEnv(BASE)).not.toHaveProperty('SVC_CHECKPOINTS');
  });

  it.each([
    ['http://api/v1', 'http://api/v1'],
    ['http://api/v1/', 'http://api/v1'],
    ['http://api', 'http://api/v1'],
    ['https://svc.example.com/', 'https://svc.example.com/v1'],
  ])('SVC_API_URL ends in /v1: %s', (input, expected) => {
    expect(apiBaseUrl(input)).toBe(expected);
    expect(sessionEnv({ ...BASE, apiUrl: input }).SVC_API_URL).toBe(expected);
  });

  it('a project secret never uses the reserved prefix or shadows a platform variable', () => {
    const { env, secretEnv } = launchEnv(sessionEnv(BASE), { ...SECRETS, projectSecrets: { SVC_SESSION_ID: 'evil', OK: 'yes' } });
    expect(env.SVC_SESSION_ID).toBe(SESSION);
    expect(env.SVC_PROJECT_SECRET_NAMES).toBe('OK');
    expect(secretEnv).not.toHaveProperty('SVC_SESSION_ID');
    expect(launchEnv(sessionEnv(BASE), SECRETS).env.SVC_PROJECT_SECRET_NAMES).toBe('');
  });

  it('the model gateway: base URL and providers plain, the session key secret; none without providers', () => {
    const key = `svcllm.${SESSION}.${'k'.repeat(43)}`;
    const { env, secretEnv } = launchEnv(sessionEnv(BASE), { ...SECRETS, gateway: { key, providers: 'local:openai,anthropic:anthropic' } });
    expect(env.SVC_LLM_BASE_URL).toBe('http://127.0.0.1:8080/v1/llm');
    expect(env.SVC_LLM_PROVIDERS).toBe('local:openai,anthropic:anthropic');
    expect(env).not.toHaveProperty('SVC_LLM_API_KEY');
    expect(secretEnv.SVC_LLM_API_KEY).toBe(key);
    const none = launchEnv(sessionEnv(BASE), SECRETS);
    for (const name of ['SVC_LLM_BASE_URL', 'SVC_LLM_PROVIDERS', 'SVC_LLM_API_KEY']) {
      expect(none.env).not.toHaveProperty(name);
      expect(none.secretEnv).not.toHaveProperty(name);
    }
    // a project secret cannot stand in for it either
    expect(launchEnv(sessionEnv(BASE), { ...SECRETS, projectSecrets: { SVC_LLM_API_KEY: 'x' } }).secretEnv).not.toHaveProperty('SVC_LLM_API_KEY');
  });

  it('spec.env round-trips, sorted by name', () => {
    const env = sessionEnv(BASE);
    const list = envList(env);
    expect(list.map((e) => e.name)).toEqual([...list.map((e) => e.name)].sort());
    expect(envMap(list)).toEqual(env);
  });
});
