import { describe, expect, it } from 'vitest';
import { parseDocument, stringify as toYaml } from 'yaml';
import TOML from '@iarna/toml';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkManifest, checkManifestFile, listedIssues, listTriggers, MANIFEST_MAX_BYTES, readManifestAt, readManifestDocumentAt } from './index.js';

type Doc = Record<string, unknown>;
const v2 = (extra: Doc = {}): Doc => ({ svc_version: 2, default_agent: 'build', agents: { build: {} }, ...extra });
const v1 = (extra: Doc = {}): Doc => ({ svc_version: 1, ...extra });
const cron = (extra: Doc = {}): Doc => ({ slug: 'nightly', type: 'cron', prompt: 'go', cron: '0 0 3 * * *', ...extra });
const hook = (extra: Doc = {}): Doc => ({ slug: 'gh', type: 'webhook', prompt: 'go', secret_env: 'GH_SECRET', ...extra });

/** Both encodings of the same document: the schema must not care which one it came from. */
const ENCODINGS = [
  ['svc.yaml', (d: Doc) => toYaml(d)],
  ['svc.toml', (d: Doc) => TOML.stringify(d as TOML.JsonMap)],
] as const;

// [rule, valid document, invalid document, JSON pointer of the issue, words the message must contain]
const RULES: [string, Doc, Doc, string, string][] = [
  ['svc_version is 1 or 2', v1(), { svc_version: 3 }, '/svc_version', 'must be the number 1 or 2'],
  ['svc_version is required', v2(), { default_agent: 'x' }, '/svc_version', 'is required'],
  ['svc_version is a number, not a string', v2(), v2({ svc_version: '2' }), '/svc_version', 'number 1 or 2'],
  ['v2 requires default_agent', v2(), { svc_version: 2, agents: { build: {} } }, '/default_agent', 'is required'],
  ['v2 default_agent is non-empty', v2(), v2({ default_agent: '' }), '/default_agent', 'must not be empty'],
  ['v2 default_agent names an agent', v2(), v2({ default_agent: 'ghost' }), '/default_agent', 'must name a key of agents (build)'],
  ['v2 runtime is engine', v2({ runtime: 'engine' }), v2({ runtime: 'docker' }), '/runtime', 'must be one of engine'],
  ['v2 agents is required', v2(), { svc_version: 2, default_agent: 'build' }, '/agents', 'is required'],
  ['v2 agents has at least one entry', v2(), v2({ agents: {} }), '/agents', 'at least one agent'],
  ['v2 agent keys follow the slug pattern', v2(), v2({ default_agent: 'Build', agents: { Build: {} } }), '/agents/Build', 'must match ^[a-z0-9][a-z0-9_-]{0,127}$'],
  ['v2 agent objects are closed', v2({ agents: { build: { enabled: true } } }), v2({ agents: { build: { color: 'red' } } }), '/agents/build/color', 'is not an allowed key'],
  ['v2 agent workspace enum', v2({ agents: { build: { workspace: 'read' } } }), v2({ agents: { build: { workspace: 'write' } } }), '/agents/build/workspace', 'must be one of runtime, read, branch'],
  ['v2 agent enabled is a boolean', v2({ agents: { build: { enabled: false } } }), v2({ agents: { build: { enabled: 'yes' } } }), '/agents/build/enabled', 'must be true or false'],
  ['allowlist: list of names', v2({ agents: { build: { connectors: ['gh'], secrets: 'all', skills: 'none' } } }), v2({ agents: { build: { secrets: ['ok', ''] } } }), '/agents/build/secrets/1', 'must not be empty'],
  ['allowlist: keyword all or none', v2({ agents: { build: { skills: 'all' } } }), v2({ agents: { build: { skills: 'some' } } }), '/agents/build/skills', 'or all, or none'],
  ['svc_cli: capability names', v2({ agents: { build: { svc_cli: ['project.read', '*'] } } }), v2({ agents: { build: { svc_cli: ['project.read', 'project.fly'] } } }), '/agents/build/svc_cli/1', 'is not a capability name'],
  ['svc_cli: all or none', v2({ agents: { build: { svc_cli: 'none' } } }), v2({ agents: { build: { svc_cli: 'every' } } }), '/agents/build/svc_cli', 'list of capability names, or all, or none'],
  ['svc_cli: version 1 extras only in version 1', v1({ agents: [{ name: 'build', svc_cli: ['channel.send', 'project.schedule.read'] }] }), v2({ agents: { build: { svc_cli: ['channel.send'] } } }), '/agents/build/svc_cli/0', 'exists only in version 1'],
  ['v1 agents is a list', v1({ agents: [{ name: 'build', env: 'all', connectors: ['gh'] }] }), v1({ agents: { build: {} } }), '/agents', 'list of agent entries'],
  ['v1 agent name follows the slug pattern', v1({ agents: [{ name: 'build' }] }), v1({ agents: [{ name: 'Build Agent' }] }), '/agents/0/name', 'must match'],
  ['v1 agent name is required', v1({ agents: [{ name: 'build', extra: 1 }] }), v1({ agents: [{ env: 'all' }] }), '/agents/0/name', 'is required'],
  ['project is an object', v2({ project: { name: 'x', description: 'y', other: 1 } }), v2({ project: { name: 3 } }), '/project/name', 'must be a string'],
  ['env lists names', v2({ env: { required: ['API_KEY', 'lower_ok'], optional: ['_X'] } }), v2({ env: { optional: ['1BAD'] } }), '/env/optional/0', 'must be an environment variable name matching ^[A-Za-z_][A-Za-z0-9_]*$'],
  ['engine.config_dir is a safe relative path', v2({ engine: { config_dir: 'tools/engine' } }), v2({ engine: { config_dir: 'a/../../etc' } }), '/engine/config_dir', 'no .. segment'],
  ['engine.config_dir is not absolute', v2({ engine: { config_dir: '.engine' } }), v2({ engine: { config_dir: '/etc' } }), '/engine/config_dir', 'not starting with /'],
  ['sandboxes is forbidden (v2)', v2(), v2({ sandboxes: [{ slug: 'a' }] }), '/sandboxes', 'is not allowed'],
  ['sandboxes is forbidden (v1)', v1(), v1({ sandboxes: { a: 1 } }), '/sandboxes', 'is not allowed'],
  ['sandbox forbids image directly', v2({ sandbox: { default: 'big' } }), v2({ sandbox: { image: 'node:20' } }), '/sandbox/image', 'put image on a template'],
  ['sandbox forbids gpu directly', v2({ sandbox: {} }), v2({ sandbox: { gpu: 1 } }), '/sandbox/gpu', 'is not allowed'],
  ['sandbox.default is non-empty', v2({ sandbox: { default: 'big' } }), v2({ sandbox: { default: '' } }), '/sandbox/default', 'must not be empty'],
  ['template: exactly one of image and dockerfile', v2({ sandbox: { templates: [{ slug: 'big', dockerfile: 'docker/Dockerfile', cpu: 2, memory: 4, disk: 10 }] } }), v2({ sandbox: { templates: [{ slug: 'big', image: 'a', dockerfile: 'b' }] } }), '/sandbox/templates/0', 'exactly one of image and dockerfile'],
  ['template: needs image or dockerfile', v2({ sandbox: { templates: [{ slug: 'big', image: 'node:20', entrypoint: 'x', name: 'Big' }] } }), v2({ sandbox: { templates: [{ slug: 'big' }] } }), '/sandbox/templates/0', 'exactly one of image and dockerfile'],
  ['template: slug is not default', v2({ sandbox: { templates: [{ slug: 'small', image: 'a' }] } }), v2({ sandbox: { templates: [{ slug: 'default', image: 'a' }] } }), '/sandbox/templates/0/slug', 'must not be default'],
  ['template: cpu is an integer >= 1', v2({ sandbox: { templates: [{ slug: 's', image: 'a', cpu: 1 }] } }), v2({ sandbox: { templates: [{ slug: 's', image: 'a', cpu: 0 }] } }), '/sandbox/templates/0/cpu', 'at least 1'],
  ['template: memory is whole', v2({ sandbox: { templates: [{ slug: 's', image: 'a', memory: 2 }] } }), v2({ sandbox: { templates: [{ slug: 's', image: 'a', memory: 1.5 }] } }), '/sandbox/templates/0/memory', 'whole number'],
  ['template: dockerfile is a safe path', v2({ sandbox: { templates: [{ slug: 's', dockerfile: 'Dockerfile' }] } }), v2({ sandbox: { templates: [{ slug: 's', dockerfile: '../Dockerfile' }] } }), '/sandbox/templates/0/dockerfile', 'no .. segment'],
  ['trigger: slug pattern', v2({ triggers: [cron()] }), v2({ triggers: [cron({ slug: 'Nightly Run' })] }), '/triggers/0/slug', 'must match'],
  ['trigger: type enum', v2({ triggers: [hook()] }), v2({ triggers: [cron({ type: 'email' })] }), '/triggers/0/type', 'must be cron or webhook'],
  ['trigger: prompt required', v2({ triggers: [cron({ prompt: undefined, prompt_template: 'go' })] }), v2({ triggers: [cron({ prompt: undefined })] }), '/triggers/0/prompt', 'is required (alias prompt_template)'],
  ['trigger: cron needs cron or run_at', v2({ triggers: [cron({ cron: undefined, runAt: '2030-01-01T00:00:00Z' })] }), v2({ triggers: [cron({ cron: undefined })] }), '/triggers/0/cron', 'needs cron (alias schedule) or run_at (alias runAt)'],
  ['trigger: cron and run_at are exclusive', v2({ triggers: [cron({ cron: undefined, schedule: '0 0 3 * * *' })] }), v2({ triggers: [cron({ run_at: '2030-01-01T00:00:00Z' })] }), '/triggers/0/run_at', 'mutually exclusive'],
  ['trigger: cron has 6 fields', v2({ triggers: [cron({ cron: '*/30 * * * * 1-5' })] }), v2({ triggers: [cron({ cron: '0 3 * * *' })] }), '/triggers/0/cron', 'exactly 6 fields'],
  ['trigger: cron parses', v2({ triggers: [cron({ cron: '0 0 3 1 JAN *' })] }), v2({ triggers: [cron({ cron: '0 61 3 * * *' })] }), '/triggers/0/cron', 'not a valid cron expression'],
  ['trigger: run_at is an ISO 8601 instant', v2({ triggers: [cron({ cron: undefined, run_at: '2030-01-31T10:00:00+01:00' })] }), v2({ triggers: [cron({ cron: undefined, run_at: '2030-01-31 10:00' })] }), '/triggers/0/run_at', 'ISO 8601 instant'],
  ['trigger: run_at has a zone', v2({ triggers: [cron({ cron: undefined, run_at: '2030-01-31T10:00:00Z' })] }), v2({ triggers: [cron({ cron: undefined, run_at: '2030-01-31T10:00:00' })] }), '/triggers/0/run_at', 'with a time zone'],
  ['trigger: timezone is IANA', v2({ triggers: [cron({ timezone: 'America/New_York' })] }), v2({ triggers: [cron({ timezone: 'Mars/Olympus' })] }), '/triggers/0/timezone', 'IANA time zone'],
  ['trigger: timezone is not an offset', v2({ triggers: [cron({ timezone: 'UTC' })] }), v2({ triggers: [cron({ timezone: '+02:00' })] }), '/triggers/0/timezone', 'IANA time zone'],
  ['trigger: webhook needs secret_env', v2({ triggers: [hook({ secret_env: undefined, secretEnv: 'GH' })] }), v2({ triggers: [hook({ secret_env: undefined })] }), '/triggers/0/secret_env', 'needs secret_env (alias secretEnv)'],
  ['trigger: secret_env pattern', v2({ triggers: [hook({ secret_env: '_GH_2' })] }), v2({ triggers: [hook({ secret_env: 'gh-secret' })] }), '/triggers/0/secret_env', 'must match ^[A-Z_][A-Z0-9_]*$'],
  ['trigger: v2 agent names a key of agents', v2({ triggers: [cron({ agent: 'build' })] }), v2({ triggers: [cron({ agent_name: 'ghost' })] }), '/triggers/0/agent_name', 'must name a key of agents (build)'],
  ['trigger: v1 agent is free', v1({ triggers: [cron({ agent: 'anything' })] }), v1({ triggers: [cron({ agent: '' })] }), '/triggers/0/agent', 'must not be empty'],
  ['trigger: session_mode in any case', v2({ triggers: [cron({ sessionMode: 'ReUse' })] }), v2({ triggers: [cron({ session_mode: 'sticky' })] }), '/triggers/0/session_mode', 'must be fresh or reuse (any case)'],
  ['trigger: enabled is a boolean', v2({ triggers: [cron({ enabled: false })] }), v2({ triggers: [cron({ enabled: 'off' })] }), '/triggers/0/enabled', 'must be true or false'],
  ['trigger: model is provider/model', v2({ triggers: [cron({ model: 'anthropic/claude-sonnet-4' })] }), v2({ triggers: [cron({ model: 'sonnet' })] }), '/triggers/0/model', '<provider>/<model>'],
  ['trigger: slugs are unique', v2({ triggers: [cron(), cron({ slug: 'other' })] }), v2({ triggers: [cron(), hook({ slug: 'nightly' })] }), '/triggers/1/slug', 'already used by trigger 0'],
  ['trigger: an alias and its field together', v2({ triggers: [cron({ name: 'Nightly', extra: 'kept' })] }), v2({ triggers: [cron({ schedule: '0 0 4 * * *' })] }), '/triggers/0/schedule', 'alias of cron'],
  ['connector: slug pattern', v2({ connectors: [{ slug: 'docs', provider: 'openapi', spec: 'x' }] }), v2({ connectors: [{ slug: 'Docs', provider: 'openapi' }] }), '/connectors/0/slug', 'must match'],
  ['connector: provider enum', v2({ connectors: [{ slug: 'd', provider: 'openapi' }] }), v2({ connectors: [{ slug: 'd', provider: 'soap' }] }), '/connectors/0/provider', 'integration_hub, mcp, openapi, graphql, http, channel'],
  ['connector: integration_hub needs app', v2({ connectors: [{ slug: 'd', provider: 'integration_hub', app: 'gh' }] }), v2({ connectors: [{ slug: 'd', provider: 'integration_hub' }] }), '/connectors/0/app', 'required when provider is integration_hub'],
  ['connector: mcp needs url', v2({ connectors: [{ slug: 'd', provider: 'mcp', url: 'http://x', transport: 'sse' }] }), v2({ connectors: [{ slug: 'd', provider: 'mcp' }] }), '/connectors/0/url', 'required when provider is mcp'],
  ['connector: graphql needs endpoint', v2({ connectors: [{ slug: 'd', provider: 'graphql', endpoint: 'http://x' }] }), v2({ connectors: [{ slug: 'd', provider: 'graphql' }] }), '/connectors/0/endpoint', 'required when provider is graphql'],
  ['connector: http needs base_url (alias baseUrl)', v2({ connectors: [{ slug: 'd', provider: 'http', baseUrl: 'http://x' }] }), v2({ connectors: [{ slug: 'd', provider: 'http' }] }), '/connectors/0/base_url', 'alias baseUrl'],
  ['connector: channel needs platform', v2({ connectors: [{ slug: 'svc_chat', provider: 'channel', platform: 'chat' }] }), v2({ connectors: [{ slug: 'c', provider: 'channel' }] }), '/connectors/0/platform', 'required when provider is channel'],
  ['connector: platform enum', v2({ connectors: [{ slug: 'c', provider: 'channel', platform: 'email' }] }), v2({ connectors: [{ slug: 'c', provider: 'channel', platform: 'fax' }] }), '/connectors/0/platform', 'chat, email, meeting'],
  ['connector: transport enum', v2({ connectors: [{ slug: 'm', provider: 'mcp', url: 'u', transport: 'http' }] }), v2({ connectors: [{ slug: 'm', provider: 'mcp', url: 'u', transport: 'ws' }] }), '/connectors/0/transport', 'http, sse'],
  ['connector: channel auth is none', v2({ connectors: [{ slug: 'c', provider: 'channel', platform: 'chat', auth: { type: 'none' } }] }), v2({ connectors: [{ slug: 'c', provider: 'channel', platform: 'chat', auth: { type: 'bearer' } }] }), '/connectors/0/auth/type', 'must be none when provider is channel'],
  ['connector: auth.type enum', v2({ connectors: [{ slug: 'h', provider: 'http', base_url: 'u', auth: { type: 'oauth1', key: 'k' } }] }), v2({ connectors: [{ slug: 'h', provider: 'http', base_url: 'u', auth: { type: 'magic' } }] }), '/connectors/0/auth/type', 'bearer, basic, custom, oauth1, none'],
  ['connector: auth.secret is forbidden', v2({ connectors: [{ slug: 'h', provider: 'http', base_url: 'u', auth: { type: 'bearer' } }] }), v2({ connectors: [{ slug: 'h', provider: 'http', base_url: 'u', auth: { type: 'bearer', secret: 'x' } }] }), '/connectors/0/auth/secret', 'never written in the manifest'],
  ['connector: policies need match and action', v2({ connectors: [{ slug: 'd', provider: 'openapi', policies: [{ match: 'GET *', action: 'always_run' }] }] }), v2({ connectors: [{ slug: 'd', provider: 'openapi', policies: [{ match: '', action: 'maybe' }] }] }), '/connectors/0/policies/0/action', 'always_run, require_approval, block'],
  ['connector: reserved channel slugs', v2({ connectors: [{ slug: 'svc_email', provider: 'channel', platform: 'email' }] }), v2({ connectors: [{ slug: 'svc_meeting', provider: 'mcp', url: 'u' }] }), '/connectors/0/provider', 'reserved for channel connectors'],
  ['connector: computer is reserved', v2({ connectors: [{ slug: 'computers', provider: 'openapi' }] }), v2({ connectors: [{ slug: 'computer', provider: 'openapi' }] }), '/connectors/0/slug', 'is reserved'],
  ['connector: v2 credential is shared', v2({ connectors: [{ slug: 'd', provider: 'openapi', credential: 'shared' }] }), v2({ connectors: [{ slug: 'd', provider: 'openapi', credential: 'personal' }] }), '/connectors/0/credential', 'must be shared in version 2'],
  ['connector: v2 forbids agent_scope', v1({ connectors: [{ slug: 'd', provider: 'openapi', agent_scope: 'x', credential: 'any' }] }), v2({ connectors: [{ slug: 'd', provider: 'openapi', agent_scope: 'x' }] }), '/connectors/0/agent_scope', 'exists only in version 1'],
  ['app: slug pattern', v2({ apps: [{ slug: 'web', name: 'Web', framework: 'next', domains: ['a.example'] }] }), v2({ apps: [{ slug: '-web' }] }), '/apps/0/slug', 'must match'],
  ['app: enabled is a flexible boolean', v2({ apps: [{ slug: 'web', enabled: 'Yes' }, { slug: 'api', enabled: 0 }, { slug: 'x', enabled: true }] }), v2({ apps: [{ slug: 'web', enabled: 'maybe' }] }), '/apps/0/enabled', 'true, false, 1, 0, yes, no, on, off'],
  ['app: source.type enum', v2({ apps: [{ slug: 'web', source: { type: 'git', repo: 'r', branch: 'main', root_path: 'web' } }] }), v2({ apps: [{ slug: 'web', source: { type: 'svn' } }] }), '/apps/0/source/type', 'git, tar'],
  ['app: source.type required', v2({ apps: [{ slug: 'web', source: { type: 'tar', url: 'u' } }] }), v2({ apps: [{ slug: 'web', source: { url: 'u' } }] }), '/apps/0/source/type', 'is required'],
  ['app: build is an object', v2({ apps: [{ slug: 'web', build: { cmd: 'x' }, env: { A: '1' } }] }), v2({ apps: [{ slug: 'web', build: 'npm run build' }] }), '/apps/0/build', 'must be a mapping'],
  ['v1 channels', v1({ channels: [{ platform: 'chat', enabled: 'on', events: ['message'] }] }), v1({ channels: [{ platform: '' }] }), '/channels/0/platform', 'must not be empty'],
  ['v1 channel enabled is a flexible boolean', v1({ channels: [{ platform: 'chat', enabled: 1 }] }), v1({ channels: [{ platform: 'chat', enabled: 'sometimes' }] }), '/channels/0/enabled', 'flexible'.length ? 'must be a boolean, a number' : ''],
  ['v2 forbids channels', v1({ channels: [] }), v2({ channels: [{ platform: 'chat' }] }), '/channels', 'exist only in version 1'],
  ['unknown top-level keys are allowed', v2({ my_tool: { anything: 1 } }), v2({ my_tool: 1, sandboxes: [] }), '/sandboxes', 'is not allowed'],
];

describe.each(ENCODINGS)('manifest schema in %s', (file, encode) => {
  describe.each(RULES)('%s', (_rule, validDoc, invalidDoc, pointer, words) => {
    it('accepts the valid case', () => {
      const check = checkManifest(file, encode(validDoc));
      expect(check.issues).toEqual([]);
      expect(check.valid).toBe(true);
      expect(check.version).toBe(validDoc.svc_version);
    });
    it(`rejects the invalid case at ${pointer}`, () => {
      const check = checkManifest(file, encode(invalidDoc));
      expect(check.valid).toBe(false);
      const issue = check.issues.find((i) => i.path === pointer);
      expect(issue, JSON.stringify(check.issues)).toBeDefined();
      expect(issue!.message).toContain(words);
    });
  });
});

describe('syntax errors', () => {
  it('a YAML syntax error is one issue with its line and column', () => {
    const check = checkManifest('svc.yaml', 'svc_version: 2\ntriggers: [a, b\nagents: {}\n');
    expect(check).toMatchObject({ valid: false, version: null, document: undefined });
    expect(check.issues).toHaveLength(1);
    expect(check.issues[0]!.path).toBe('');
    expect(check.issues[0]!.message).toMatch(/^YAML syntax error at line 3, column 1: /);
  });

  it('duplicate YAML keys are a syntax error', () => {
    const check = checkManifest('svc.yaml', 'svc_version: 2\nsvc_version: 1\n');
    expect(check.issues).toEqual([{ path: '', message: expect.stringMatching(/^YAML syntax error at line 2, column 1: Map keys must be unique/) }]);
  });

  it('finds duplicate keys where yaml\'s own check finds them: the first in the text, scalars by value, in block and flow maps', () => {
    const docs = [
      'a: 1\nb:\n  c: 1\n  c: 2\n', 'x: {a: 1, "a": 2}\n', '1: a\n"1": b\n', '~: 1\nnull: 2\n', '? [a]\n: 1\n? [a]\n: 2\n',
      'a:\n  - {k: 1, k: 2}\nb: 1\nb: 2\n', 'z: 1\ny: {q: 1}\nz: 2\ny: 3\n', '.nan: 1\n.nan: 2\n', 'a: [1, 1]\n', 'a: 1\nb: [c, d\na: 2\n',
      'a: &x 1\n*x : 2\n', 'deep: {a: {b: {c: 1, c: 2}}}\ndeep2: 1\ndeep2: 2\n',
    ];
    for (const text of docs) {
      const own = parseDocument(text, { prettyErrors: true, uniqueKeys: true }).errors[0];
      const expected = own ? `YAML syntax error at line ${own.linePos![0].line}, column ${own.linePos![0].col}: ${own.message.split('\n')[0]!.replace(/ at line \d+, column \d+.*$/, '')}` : undefined;
      const issues = checkManifest('svc.yaml', text).issues.filter((i) => i.message.startsWith('YAML syntax error'));
      expect(issues.map((i) => i.message), text).toEqual(expected ? [expected] : []);
    }
  });

  it('checks a map of 64,000 agents in time linear in it, and lists 20 of their names where it offers them', () => {
    // yaml's own duplicate-key check compared each key with every key before it: 7 minutes here
    const agents = Array.from({ length: 64_000 }, (_, i) => `  a${i}: {}\n`).join('');
    const check = checkManifest('svc.yaml', `svc_version: 2\ndefault_agent: nobody\nagents:\n${agents}triggers:\n${'  - {slug: s, type: webhook, secret_env: S, prompt: p, agent: x}\n'.repeat(2)}`);
    const names = Array.from({ length: 20 }, (_, i) => `a${i}`).join(', ');
    expect(check.issues).toEqual([
      { path: '/triggers/0/agent', message: `must name a key of agents (${names}, and 63980 more)` },
      { path: '/triggers/1/slug', message: 'is already used by trigger 0: trigger slugs must be unique' },
      { path: '/triggers/1/agent', message: `must name a key of agents (${names}, and 63980 more)` },
      { path: '/default_agent', message: `must name a key of agents (${names}, and 63980 more)` },
    ]);
  }, 60_000);

  it('a TOML syntax error is one issue with its line and column', () => {
    const check = checkManifest('svc.toml', 'svc_version = 1\nname = = "x"\n');
    expect(check.issues).toEqual([{ path: '', message: expect.stringMatching(/^TOML syntax error at line 2, column 8: /) }]);
    expect(check.document).toBeUndefined();
  });

  it('a single-bracket [triggers] table in TOML says to write [[triggers]]', () => {
    const check = checkManifest('svc.toml', 'svc_version = 1\n\n[triggers]\nslug = "a"\n');
    expect(check.valid).toBe(false);
    expect(check.issues).toEqual([{ path: '/triggers', message: expect.stringContaining('line 3') }]);
    expect(check.issues[0]!.message).toContain('[[triggers]]');
  });

  it('triggers as a YAML mapping is reported as not a list', () => {
    expect(checkManifest('svc.yaml', toYaml(v2({ triggers: { slug: 'x' } }))).issues)
      .toEqual([{ path: '/triggers', message: 'must be a list of trigger entries' }]);
  });

  it('an empty file and a non-mapping document are reported at the root', () => {
    expect(checkManifest('svc.yaml', '').issues).toEqual([{ path: '', message: 'the manifest is empty: it needs at least svc_version' }]);
    expect(checkManifest('svc.yaml', '- 1\n').issues).toEqual([{ path: '', message: expect.stringContaining('must be a mapping') }]);
  });

  it('JSON pointers escape / and ~ in keys', () => {
    const check = checkManifest('svc.yaml', toYaml(v2({ agents: { build: { 'a/b~c': 1 } } })));
    expect(check.issues).toContainEqual({ path: '/agents/build/a~1b~0c', message: 'is not an allowed key here' });
  });

  it('TOML date-times are read as ISO 8601 strings', () => {
    const text = 'svc_version = 1\n[[triggers]]\nslug = "once"\ntype = "cron"\nprompt = "go"\nrun_at = 2030-01-31T10:00:00+01:00\n';
    expect(checkManifest('svc.toml', text)).toMatchObject({ valid: true, version: 1 });
    const local = text.replace('+01:00', '');
    expect(checkManifest('svc.toml', local).issues).toEqual([{ path: '/triggers/0/run_at', message: expect.stringContaining('with a time zone') }]);
  });
});

describe('a manifest larger than 1 MiB', () => {
  const message = (file: string, bytes: number) => `${file} is ${bytes} bytes; a manifest may be at most ${MANIFEST_MAX_BYTES} bytes (1 MiB)`;
  const padded = (bytes: number) => {
    const head = toYaml(v2());
    return head + '#'.repeat(bytes - Buffer.byteLength(head));
  };

  it('is invalid, not parsed; 1 MiB exactly is read (bytes counted, not characters)', () => {
    expect(checkManifest('svc.yaml', padded(MANIFEST_MAX_BYTES)).valid).toBe(true);
    const over = padded(MANIFEST_MAX_BYTES - 1) + 'é';
    expect(checkManifest('svc.yaml', over)).toEqual({
      file: 'svc.yaml', version: null, valid: false, issues: [{ path: '', message: message('svc.yaml', MANIFEST_MAX_BYTES + 1) }], warnings: [], document: undefined,
    });
  });

  it('read from a commit: a file its reader left unread for its size is invalid with that size', async () => {
    const read = async (_sha: string, file: string) => (file === 'svc.yaml' ? { bytes: 5_000_000 } : null);
    expect((await readManifestAt(read, 'abc'))?.check.issues).toEqual([{ path: '', message: message('svc.yaml', 5_000_000) }]);
    expect(await readManifestDocumentAt(read, 'abc')).toBeUndefined();
  });

  it('read from a commit for its document only: parsed as the check parses it, not checked', async () => {
    const files: Record<string, string> = { 'svc.toml': 'svc_version = 1\n[[agents]]\nname = "a"\n' };
    const read = async (_sha: string, file: string) => files[file] ?? null;
    expect(await readManifestDocumentAt(read, 'abc')).toEqual(checkManifest('svc.toml', files['svc.toml']!).document);
    files['svc.yaml'] = 'default_agent: x\nagents: {x: {}}\n'; // no svc_version: invalid, still read
    expect(await readManifestDocumentAt(read, 'abc')).toEqual({ default_agent: 'x', agents: { x: {} } });
    files['svc.yaml'] = 'a: [1\n';
    expect(await readManifestDocumentAt(read, 'abc')).toBeUndefined();
  });

  it('read from a file: refused before it is read', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-manifest-size-'));
    try {
      writeFileSync(path.join(dir, 'svc.toml'), Buffer.alloc(MANIFEST_MAX_BYTES + 10, 0x23));
      expect(checkManifestFile(path.join(dir, 'svc.toml')).issues).toEqual([{ path: '', message: message('svc.toml', MANIFEST_MAX_BYTES + 10) }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a manifest with thousands of misspelled trigger entries', () => {
  // every issue was matched with every "did you mean" hint, and the listing found the hints again
  // for each entry: 1,000 entries (13 KB) took seconds to check and minutes to list
  const entries = Array.from({ length: 3_000 }, (_, i) => `  - {slug: t${i}, type: cron, crn: "* * * * *", prompt: go}\n`).join('');
  const text = `svc_version: 1\nproject:\n  name: x\ntriggers:\n${entries}`;

  it('is checked and listed, each entry hinted; where they are shown, the issues are listed up to 100', () => {
    const check = checkManifest('svc.yaml', text);
    expect(check.valid).toBe(false);
    expect(check.issues).toHaveLength(3_000);
    expect(check.issues[0]).toEqual({ path: '/triggers/0/cron', message: expect.stringContaining('unknown key crn: did you mean cron?') });
    const listed = listedIssues(check.issues);
    expect(listed).toHaveLength(101);
    expect(listed[100]).toEqual({ path: '', message: 'and 2900 more like these (the first 100 are listed)' });
    const listing = listTriggers(check);
    expect(listing.errors).toHaveLength(3_000);
    expect(listing.errors[2_999]!.messages.join('; ')).toContain('did you mean cron?');
  });
});
