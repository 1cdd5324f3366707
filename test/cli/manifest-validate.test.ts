import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES, REPO_ROOT, svc } from './run-cli.js';

const SLUG_MESSAGE = 'must match ^[a-z0-9][a-z0-9_-]{0,127}$ (lowercase letters, digits, _ and -, starting with a letter or digit, at most 128 characters)';

describe('svc manifest validate', () => {
  let empty: string;
  beforeAll(() => { empty = mkdtempSync(path.join(os.tmpdir(), 'svc-cli-empty-')); });
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it('a valid repository directory: one line, exit 0', () => {
    const r = svc(['manifest', 'validate', `${FIXTURES}/valid-v2`]);
    expect(r).toEqual({ code: 0, stdout: `valid: ${FIXTURES}/valid-v2/svc.yaml (version 2), 3 triggers\n`, stderr: '' });
  });

  it('defaults to the current directory', () => {
    const r = svc(['manifest', 'validate'], path.join(REPO_ROOT, FIXTURES, 'valid-v2'));
    expect(r.stdout).toBe('valid: svc.yaml (version 2), 3 triggers\n');
    expect(r.code).toBe(0);
  });

  it('an invalid manifest: one line per issue, exit 1', () => {
    const r = svc(['manifest', 'validate', `${FIXTURES}/invalid-v2/svc.yaml`]);
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n').sort()).toEqual([
      `${FIXTURES}/invalid-v2/svc.yaml /agents/build/workspace: must be one of runtime, read, branch`,
      `${FIXTURES}/invalid-v2/svc.yaml /sandboxes: is not allowed: declare sandbox templates under sandbox.templates`,
      `${FIXTURES}/invalid-v2/svc.yaml /triggers/0/cron: must have exactly 6 fields (second, minute, hour, day of month, month, day of week), found 5`,
      `${FIXTURES}/invalid-v2/svc.yaml /triggers/1/secret_env: must match ^[A-Z_][A-Z0-9_]*$ (uppercase letters, digits and _)`,
    ]);
  });

  it('--json prints exactly one document with valid, file, version, issues, agent_issues', () => {
    const r = svc(['manifest', 'validate', `${FIXTURES}/legacy-v1`, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      valid: false,
      file: `${FIXTURES}/legacy-v1/svc.toml`,
      version: 1,
      issues: [
        { path: '/triggers/1/slug', message: SLUG_MESSAGE },
        { path: '/triggers/1/secret_env', message: 'a webhook trigger needs secret_env (alias secretEnv), the name of the project secret that authenticates it' },
      ],
      agent_issues: [],
    });
  });

  it('--json of a valid directory', () => {
    const r = svc(['manifest', 'validate', `${FIXTURES}/valid-v2`, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ valid: true, file: `${FIXTURES}/valid-v2/svc.yaml`, version: 2, issues: [], agent_issues: [] });
  });

  it('a YAML syntax error is one issue with line and column, exit 1', () => {
    const r = svc(['manifest', 'validate', `${FIXTURES}/syntax-yaml`, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      valid: false,
      file: `${FIXTURES}/syntax-yaml/svc.yaml`,
      version: null,
      issues: [{ path: '', message: 'YAML syntax error at line 3, column 1: Flow map in block collection must be sufficiently indented and end with a }' }],
      agent_issues: [],
    });
  });

  it('a single-bracket [triggers] in svc.toml says to write [[triggers]]', () => {
    const r = svc(['manifest', 'validate', `${FIXTURES}/single-bracket`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`${FIXTURES}/single-bracket/svc.toml /triggers: line 3: [triggers] declares one table; write each trigger as an array-of-tables entry, [[triggers]] (double brackets)\n`);
  });

  it('in a directory, also validates agent definition files and skills', () => {
    const dir = `${FIXTURES}/bad-agent-files`;
    const human = svc(['manifest', 'validate', dir]);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe([
      `${dir}/.svc/engine/agents/build.md /mode: must be one of primary, subagent, all`,
      `${dir}/.svc/engine/skills/empty/SKILL.md: is missing: a skill directory needs a SKILL.md file`,
      `${dir}/.svc/engine/skills/deploy/SKILL.md: is missing: agent build lists the skill deploy`,
    ].join('\n') + '\n');
    const json = JSON.parse(svc(['manifest', 'validate', dir, '--json']).stdout);
    expect(json).toEqual({
      valid: false,
      file: `${dir}/svc.yaml`,
      version: 2,
      issues: [],
      agent_issues: [
        { file: `${dir}/.svc/engine/agents/build.md`, path: '/mode', message: 'must be one of primary, subagent, all' },
        { file: `${dir}/.svc/engine/skills/empty/SKILL.md`, path: '', message: 'is missing: a skill directory needs a SKILL.md file' },
        { file: `${dir}/.svc/engine/skills/deploy/SKILL.md`, path: '', message: 'is missing: agent build lists the skill deploy' },
      ],
    });
  });

  it('a file given directly does not look at agent files', () => {
    const r = svc(['manifest', 'validate', `${FIXTURES}/bad-agent-files/svc.yaml`]);
    expect(r).toMatchObject({ code: 0, stdout: `valid: ${FIXTURES}/bad-agent-files/svc.yaml (version 2), 0 triggers\n` });
  });

  it('prefers svc.yaml over svc.toml in a directory', () => {
    writeFileSync(path.join(empty, 'svc.toml'), 'svc_version = 1\n');
    writeFileSync(path.join(empty, 'svc.yaml'), 'svc_version: 2\ndefault_agent: a\nagents: {a: {}}\n');
    expect(svc(['manifest', 'validate', empty]).stdout).toBe(`valid: ${path.join(empty, 'svc.yaml')} (version 2), 0 triggers\n`);
    rmSync(path.join(empty, 'svc.yaml'));
    expect(svc(['manifest', 'validate', empty]).stdout).toBe(`valid: ${path.join(empty, 'svc.toml')} (version 1), 0 triggers\n`);
    rmSync(path.join(empty, 'svc.toml'));
  });

  it('exit 2 for a missing path, a directory without manifest, a file of unknown encoding, an unknown option', () => {
    expect(svc(['manifest', 'validate', 'no/such/dir'])).toEqual({ code: 2, stdout: '', stderr: 'svc: no/such/dir: cannot read: no such file or directory\n' });
    expect(svc(['manifest', 'validate', empty])).toEqual({ code: 2, stdout: '', stderr: `svc: ${empty}: no svc.yaml or svc.toml in this directory\n` });
    expect(svc(['manifest', 'validate', 'package.json'])).toMatchObject({ code: 2, stderr: expect.stringContaining('a manifest file ends in .yaml, .yml or .toml') });
    expect(svc(['manifest', 'validate', '--yaml'])).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown option '--yaml'") });
  });

  it('a misspelled key: "did you mean" on the missing key, and a warning for a merely unknown one', () => {
    const file = path.join(empty, 'svc.yaml');
    writeFileSync(file, 'svc_version: 2\ndefault_agnet: build\nagents:\n  build: {}\ntriggers:\n  - slug: nightly\n    type: cron\n    crn: "0 0 3 * * *"\n    timezon: UTC\n    prompt: hi\n');
    try {
      const r = svc(['manifest', 'validate', file]);
      expect(r.code).toBe(1);
      expect(r.stdout.trimEnd().split('\n')).toEqual([
        `${file} /triggers/0/cron: a cron trigger needs cron (alias schedule) or run_at (alias runAt) (unknown key crn: did you mean cron?)`,
        `${file} /default_agent: is required (unknown key default_agnet: did you mean default_agent?)`,
        `warning: ${file} /triggers/0/timezon: unknown key: did you mean timezone? (unknown keys are allowed here and ignored)`,
      ]);
      expect(JSON.parse(svc(['manifest', 'validate', file, '--json']).stdout).warnings).toEqual([
        { path: '/triggers/0/timezon', message: 'unknown key: did you mean timezone? (unknown keys are allowed here and ignored)' },
      ]);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('a prompt tag that names no variable of its trigger\'s fire (it would render empty): a warning, still valid; svc ship --dry-run says it too', () => {
    const file = path.join(empty, 'svc.yaml');
    writeFileSync(file, 'svc_version: 2\ndefault_agent: build\nagents:\n  build: {}\ntriggers:\n  - slug: on-push\n    type: webhook\n    secret_env: HOOK\n    prompt: "Push to {{ payload.ref }} ({{ body.ref }}, {{ message.text }})"\n');
    const message = '{{ payload.ref }} names no variable of a webhook fire and renders empty; it has trigger.slug, trigger.type, trigger.kind, fired_at, body.*, headers.content_type, headers.user_agent, headers.forwarded_for (fired by hand also source, actor, message.text, message.source)';
    try {
      const r = svc(['manifest', 'validate', file]);
      expect(r.code).toBe(0);
      expect(r.stdout.trimEnd().split('\n')).toEqual([`valid: ${file} (version 2), 1 trigger`, `warning: ${file} /triggers/0/prompt: ${message}`]);
      expect(JSON.parse(svc(['manifest', 'validate', file, '--json']).stdout)).toMatchObject({ valid: true, warnings: [{ path: '/triggers/0/prompt', message }] });
      const ship = svc(['ship', '--dry-run', file]);
      expect(ship.code).toBe(0);
      expect(ship.stdout).toContain(`warning: ${file} /triggers/0/prompt: ${message}`);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
