import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, svc } from './run-cli.js';

describe('svc triggers ls', () => {
  it('--json: normalized triggers (aliases resolved, defaults filled) and errors', () => {
    const r = svc(['triggers', 'ls', `${FIXTURES}/valid-v2`, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      triggers: [
        {
          slug: 'nightly', type: 'cron', name: 'nightly', prompt: 'Run the nightly checks ({{ cron.fired_at }})', agent: 'build',
          session_mode: 'fresh', enabled: true, timezone: 'Europe/Paris', cron: '0 0 3 * * *',
        },
        {
          slug: 'gh-push', type: 'webhook', name: 'gh-push', prompt: 'Look at {{ body.ref }}', agent: 'review',
          session_mode: 'reuse', enabled: true, timezone: 'UTC', secret_env: 'GH_WEBHOOK_SECRET',
        },
        {
          slug: 'launch', type: 'cron', name: 'launch', prompt: 'Launch day', agent: 'build',
          session_mode: 'fresh', enabled: false, timezone: 'UTC', run_at: '2030-01-31T09:00:00.000Z',
        },
      ],
      errors: [],
    });
  });

  it('invalid entries are listed in errors next to the valid ones; exit 0', () => {
    const r = svc(['triggers', 'ls', `${FIXTURES}/legacy-v1/svc.toml`, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      triggers: [{
        slug: 'hourly', type: 'cron', name: 'hourly', prompt: 'Hourly sweep', agent: 'default',
        session_mode: 'fresh', enabled: true, timezone: 'UTC', cron: '0 0 * * * *',
      }],
      errors: [{
        index: 1,
        slug: 'Bad Slug',
        messages: [
          'slug: must match ^[a-z0-9][a-z0-9_-]{0,127}$ (lowercase letters, digits, _ and -, starting with a letter or digit, at most 128 characters)',
          'secret_env: a webhook trigger needs secret_env (alias secretEnv), the name of the project secret that authenticates it',
        ],
      }],
    });
  });

  it('human output is a table with the next fire time of cron triggers, then the errors', () => {
    const r = svc(['triggers', 'ls', `${FIXTURES}/valid-v2`]);
    expect(r.code).toBe(0);
    const [header, nightly, hook, launch, ...rest] = r.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['SLUG', 'TYPE', 'SCHEDULE OR SECRET', 'MODE', 'ENABLED', 'NEXT FIRE']);
    const cells = (line: string) => line.split(/\s{2,}/);
    expect(cells(nightly!).slice(0, 5)).toEqual(['nightly', 'cron', '0 0 3 * * * (Europe/Paris)', 'fresh', 'true']);
    // 03:00 in Paris is 01:00 or 02:00 UTC depending on daylight saving time
    expect(cells(nightly!)[5]).toMatch(/^\d{4}-\d{2}-\d{2}T0[12]:00:00\.000Z$/);
    expect(new Date(cells(nightly!)[5]!).getTime()).toBeGreaterThan(Date.now());
    expect(cells(hook!)).toEqual(['gh-push', 'webhook', 'secret GH_WEBHOOK_SECRET', 'reuse', 'true', '-']);
    expect(cells(launch!)).toEqual(['launch', 'cron', 'once at 2030-01-31T09:00:00.000Z', 'fresh', 'false', '-']);
    expect(rest).toEqual([]);
    const legacy = svc(['triggers', 'ls', `${FIXTURES}/legacy-v1`]).stdout.trimEnd().split('\n');
    expect(legacy.slice(2)).toEqual([
      'invalid trigger 1 (Bad Slug): slug: must match ^[a-z0-9][a-z0-9_-]{0,127}$ (lowercase letters, digits, _ and -, starting with a letter or digit, at most 128 characters)',
      'invalid trigger 1 (Bad Slug): secret_env: a webhook trigger needs secret_env (alias secretEnv), the name of the project secret that authenticates it',
    ]);
  });

  it('exit 1 when the file cannot be parsed', () => {
    expect(svc(['triggers', 'ls', `${FIXTURES}/syntax-yaml`, '--json'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `svc: ${FIXTURES}/syntax-yaml/svc.yaml: YAML syntax error at line 3, column 1: Flow map in block collection must be sufficiently indented and end with a }\n`,
    });
    expect(svc(['triggers', 'ls', `${FIXTURES}/single-bracket`])).toMatchObject({ code: 1, stderr: expect.stringContaining('[[triggers]]') });
  });

  it('exit 2 for an unreadable path', () => {
    expect(svc(['triggers', 'ls', 'no/such.yaml'])).toMatchObject({ code: 2, stderr: 'svc: no/such.yaml: cannot read: no such file or directory\n' });
  });

  it('exit 2 for a directory without a manifest, pointing to the live listing a person may have meant', () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'svc-no-manifest-'));
    try {
      expect(svc(['triggers', 'ls', empty])).toEqual({
        code: 2,
        stdout: '',
        stderr: `svc: ${empty}: no svc.yaml or svc.toml in this directory; the triggers of a live project: svc triggers ls --project NAME\n`,
      });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
