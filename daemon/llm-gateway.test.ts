import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentFileModels, declaresProviders, gatewayEngineConfig, parseJsonc, parseProviders, repositoryEngineConfigs } from './llm-gateway.js';
import { resolveEngineConfigDir } from './engine-config.js';

const gateway = { baseUrl: 'http://10.0.0.1:8080/v1/llm', providers: parseProviders('local:openai,anthropic:anthropic,openai:openai').providers };
const KEY = '{env:SVC_LLM_API_KEY}';

describe('SVC_LLM_PROVIDERS', () => {
  it('parses name:protocol entries and names the rest', () => {
    expect(parseProviders('a:openai, b-2:anthropic,,bad,c:grpc,a:anthropic')).toEqual({
      providers: [{ name: 'a', protocol: 'openai' }, { name: 'b-2', protocol: 'anthropic' }],
      ignored: ['bad', 'c:grpc', 'a:anthropic'],
    });
  });
});

describe('the engine config for the gateway', () => {
  it('one provider per entry: catalog providers keep their SDK, others get the protocol\'s; the key stays in the environment', () => {
    const config = gatewayEngineConfig({ gateway, configs: [], engineModel: 'local/qwen-coder', agentModels: ['anthropic/claude-x'], discovered: {} })!;
    expect(config).toEqual({
      provider: {
        local: {
          npm: '@ai-sdk/openai-compatible', name: 'local (svc model gateway)',
          options: { baseURL: 'http://10.0.0.1:8080/v1/llm/local', apiKey: KEY },
          models: { 'qwen-coder': { name: 'qwen-coder', tool_call: true } },
        },
        anthropic: { options: { baseURL: 'http://10.0.0.1:8080/v1/llm/anthropic', apiKey: KEY }, models: { 'claude-x': { name: 'claude-x', tool_call: true } } },
        openai: { options: { baseURL: 'http://10.0.0.1:8080/v1/llm/openai', apiKey: KEY } },
      },
      enabled_providers: ['local', 'anthropic', 'openai'],
      model: 'local/qwen-coder',
    });
    expect(JSON.stringify(config)).not.toMatch(/svcllm\./);
  });

  it('an anthropic-protocol provider under another name uses the Anthropic SDK', () => {
    const config = gatewayEngineConfig({ gateway: { ...gateway, providers: [{ name: 'corp', protocol: 'anthropic' }] }, configs: [], agentModels: [], discovered: { corp: ['c1', 'c2'] } })!;
    expect(config.provider).toEqual({ corp: expect.objectContaining({ npm: '@ai-sdk/anthropic', models: { c1: expect.any(Object), c2: expect.any(Object) } }) });
    expect(config.model).toBe('corp/c1'); // nothing named a model: the first the provider listed
  });

  it('keeps the repository\'s model; declares the models its config names', () => {
    const config = gatewayEngineConfig({ gateway, configs: [{ model: 'local/big', small_model: 'local/small', agent: { plan: { model: 'openai/gpt-x' } } }], agentModels: [], discovered: { local: ['ignored'] } })!;
    expect(config.model).toBeUndefined();
    expect(Object.keys((config.provider as Record<string, { models: object }>).local.models)).toEqual(['big', 'small']);
    expect((config.provider as Record<string, { models: object }>).openai.models).toEqual({ 'gpt-x': { name: 'gpt-x', tool_call: true } });
  });

  it('is not used when the repository declares its own providers', () => {
    const own = [{ provider: { mock: { npm: '@ai-sdk/openai-compatible' } } }];
    expect(declaresProviders(own)).toBe(true);
    expect(gatewayEngineConfig({ gateway, configs: own, agentModels: [], discovered: {} })).toBeNull();
    expect(declaresProviders([{ provider: {} }, { model: 'x/y' }])).toBe(false);
  });
});

describe('reading the repository', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-llm-gw-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads opencode.json(c) of the config dir and the workspace, and agent files\' models', () => {
    const workspace = path.join(dir, 'ws');
    const configDir = path.join(workspace, '.svc', 'engine');
    mkdirSync(path.join(configDir, 'agents'), { recursive: true });
    writeFileSync(path.join(configDir, 'opencode.jsonc'), '{\n  // the team\'s model\n  "model": "local/m1", /* trailing */\n  "share": "disabled",\n}\n');
    writeFileSync(path.join(workspace, 'opencode.json'), '{"small_model": "local/m0"}');
    writeFileSync(path.join(configDir, 'agents', 'reviewer.md'), '---\ndescription: reviews\nmodel: anthropic/claude-x\n---\nBe strict.\n');
    writeFileSync(path.join(configDir, 'agents', 'plain.md'), 'no front matter\n');
    expect(repositoryEngineConfigs(configDir, workspace)).toEqual([{ model: 'local/m1', share: 'disabled' }, { small_model: 'local/m0' }]);
    expect(agentFileModels(configDir)).toEqual(['anthropic/claude-x']);
    expect(parseJsonc('{"a": "// not a comment", "b": [1,],}')).toEqual({ a: '// not a comment', b: [1] });
  });

  it('reads YAML of the branch in time linear in it: 64,000 keys, a repeated one, and a file past 1 MiB left unread', () => {
    // yaml's own duplicate-key check compared each key with every key before it: minutes on this loop, which answers health
    const workspace = path.join(dir, 'big');
    const configDir = path.join(workspace, 'cfg');
    mkdirSync(path.join(configDir, 'agents'), { recursive: true });
    const keys = Array.from({ length: 64_000 }, (_, i) => `k${i}: ${i}\n`).join('');
    writeFileSync(path.join(workspace, 'svc.yaml'), `${keys}engine:\n  config_dir: one\nengine:\n  config_dir: cfg\n`);
    writeFileSync(path.join(configDir, 'agents', 'many.md'), `---\n${keys}model: local/many\nmodel: local/last\n---\nbody\n`);
    writeFileSync(path.join(configDir, 'agents', 'huge.md'), `---\nmodel: local/huge\n---\n${'x'.repeat(1024 * 1024)}`);
    expect(resolveEngineConfigDir(workspace)).toBe(realpathSync(configDir));
    expect(agentFileModels(configDir)).toEqual(['local/last']);
  }, 30_000);
});
