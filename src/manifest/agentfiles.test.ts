import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkAgentFiles, checkAgentFrontMatter, engineDirOf } from './index.js';

const md = (frontMatter: string) => `---\n${frontMatter}\n---\nYou review code.\n`;

// [field, valid value, invalid value, words of the message]
const FIELDS: [string, string, string, string][] = [
  ['description', 'Reviews code', '[1]', 'must be a string'],
  ['model', 'anthropic/claude-sonnet-4', '3', 'must be a string'],
  ['mode', 'subagent', 'helper', 'must be one of primary, subagent, all'],
  ['variant', 'high', '{}', 'must be a string'],
  ['temperature', '0.2', 'warm', 'must be a number'],
  ['top_p', '0.9', 'high', 'must be a number'],
  ['steps', '5', '0', 'must be at least 1'],
  ['color', '"#a0B1c2"', 'teal', 'must be # and 6 hex digits, or one of primary'],
  ['color', 'accent', '"#abc"', 'must be # and 6 hex digits'],
  ['hidden', 'true', 'yes', 'must be true or false'],
  ['disable', 'false', '"no"', 'must be true or false'],
  ['options', '{ reasoning: high }', 'fast', 'must be a mapping'],
  ['permission', 'ask', 'never', 'must be one of ask, allow, deny'],
  ['permission', '{ webfetch: deny, bash: { "git *": allow, "*": ask }, edit: allow }', '{ webfetch: { "*": allow } }', 'must be one of ask, allow, deny'],
  ['permission', '{ doom_loop: ask }', '{ bash: { "git *": sometimes } }', 'must be one of ask, allow, deny'],
];

describe('agent definition front matter', () => {
  it.each(FIELDS)('%s: accepts %s, rejects %s', (field, good, bad, words) => {
    expect(checkAgentFrontMatter(md(`${field}: ${good}`))).toEqual([]);
    const issues = checkAgentFrontMatter(md(`${field}: ${bad}`));
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]!.path.startsWith(`/${field}`)).toBe(true);
    expect(issues[0]!.message).toContain(words);
  });

  it('a file without front matter is fine; an unclosed one is not', () => {
    expect(checkAgentFrontMatter('Just instructions.\n')).toEqual([]);
    expect(checkAgentFrontMatter('---\nmode: all\n')).toEqual([{ path: '', message: expect.stringContaining('no closing ---') }]);
  });

  it('a YAML error gives the line in the file', () => {
    expect(checkAgentFrontMatter('---\nmode: all\ncolor: [\n---\n')[0]!.message).toMatch(/^YAML syntax error at line 3, column 9/);
  });
});

describe('agent files and skills in a repository', () => {
  let repo: string;
  beforeEach(() => { repo = mkdtempSync(path.join(os.tmpdir(), 'svc-agentfiles-')); });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    writeFileSync(path.join(repo, rel), text);
  };

  it('checks <engine dir>/agents/*.md and requires SKILL.md in every skill directory', () => {
    write('.svc/engine/agents/review.md', md('mode: subagent'));
    write('.svc/engine/agents/build.md', md('mode: boss'));
    write('.svc/engine/agents/notes.txt', 'not an agent');
    write('.svc/engine/skills/release/SKILL.md', '# Release');
    mkdirSync(path.join(repo, '.svc/engine/skills/empty'), { recursive: true });
    expect(checkAgentFiles(repo, { svc_version: 2 })).toEqual([
      { file: '.svc/engine/agents/build.md', path: '/mode', message: 'must be one of primary, subagent, all' },
      { file: '.svc/engine/skills/empty/SKILL.md', path: '', message: 'is missing: a skill directory needs a SKILL.md file' },
    ]);
  });

  it('uses engine.config_dir and the skills version 2 agents list (a skill listed twice is one issue)', () => {
    write('tools/engine/agents/build.md', md('steps: 0'));
    write('.svc/engine/agents/ignored.md', md('mode: boss'));
    write('tools/engine/skills/lint/SKILL.md', '# Lint');
    const doc = { svc_version: 2, engine: { config_dir: 'tools/engine' }, agents: { build: { skills: ['lint', 'deploy', 'deploy'] } } };
    expect(engineDirOf(doc)).toBe('tools/engine');
    expect(checkAgentFiles(repo, doc)).toEqual([
      { file: 'tools/engine/agents/build.md', path: '/steps', message: 'must be at least 1' },
      { file: 'tools/engine/skills/deploy/SKILL.md', path: '', message: 'is missing: agent build lists the skill deploy' },
    ]);
  });

  it('a repository without an engine directory has no issues', () => {
    expect(checkAgentFiles(repo, undefined)).toEqual([]);
    expect(engineDirOf({ engine: { config_dir: '../outside' } })).toBe('.svc/engine');
  });
});
