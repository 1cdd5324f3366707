import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES, svc } from './run-cli.js';

describe('svc ship', () => {
  let empty: string;
  beforeAll(() => { empty = mkdtempSync(path.join(os.tmpdir(), 'svc-cli-ship-')); });
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it('--dry-run passes a valid manifest', () => {
    expect(svc(['ship', '--dry-run', `${FIXTURES}/valid-v2`])).toEqual({
      code: 0, stdout: `pre-flight passed: ${FIXTURES}/valid-v2/svc.yaml (version 2), 3 triggers\n`, stderr: '',
    });
  });

  it('--dry-run fails an invalid manifest with its issues, exit 1', () => {
    const r = svc(['ship', '--dry-run', `${FIXTURES}/invalid-v2`, '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ valid: false, file: `${FIXTURES}/invalid-v2/svc.yaml`, version: 2 });
    expect(doc.issues).toHaveLength(4);
    const human = svc(['ship', '--dry-run', `${FIXTURES}/invalid-v2`]);
    expect(human.stdout.trimEnd().split('\n').at(-1)).toBe(`pre-flight failed: 4 issues in ${FIXTURES}/invalid-v2/svc.yaml`);
  });

  it('--dry-run checks the manifest only, like the merge gate (agent files are not part of it)', () => {
    expect(svc(['ship', '--dry-run', `${FIXTURES}/bad-agent-files`]).code).toBe(0);
  });

  it('--dry-run passes a directory without manifest, like the merge gate', () => {
    expect(svc(['ship', '--dry-run', empty, '--json'])).toEqual({
      code: 0, stdout: `${JSON.stringify({ valid: true, file: null, version: null, issues: [] }, null, 2)}\n`, stderr: '',
    });
  });

  it('without --dry-run, an invalid manifest stops it before anything is pushed, exit 1', () => {
    const r = svc(['ship', `${FIXTURES}/invalid-v2`, '--title', 'x']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`pre-flight failed: 4 issues in ${FIXTURES}/invalid-v2/svc.yaml`);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('svc: pre-flight failed: fix the manifest, commit, and run svc ship again; nothing was pushed');
  });
});

describe('svc --version and --help', () => {
  it('--version prints the package version', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(svc(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it.each([
    [[], 'svc manifest validate'],
    [['manifest'], 'svc manifest validate --json'],
    [['manifest', 'validate'], 'svc manifest validate ../repo --json'],
    [['triggers', 'ls'], 'svc triggers ls svc.toml --json'],
    [['triggers'], 'svc triggers ls'],
    [['ship'], 'svc ship --dry-run'],
  ])('svc %j --help shows usage and examples', (args, example) => {
    const r = svc([...args, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: svc');
    expect(r.stdout).toContain(example);
  });

  it('usage errors exit 2', () => {
    expect(svc(['launch'])).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'launch'") });
    expect(svc(['manifest'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: svc manifest') });
    expect(svc(['triggers', 'ls', 'a', 'b'])).toMatchObject({ code: 2, stderr: expect.stringContaining('too many arguments') });
  });
});
