import { describe, expect, it } from 'vitest';
import type { SerializedProject } from '../../lib/rest-shapes.js';
import { mkdtempSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatProject, formatProjectList, localRepoPath } from './projects.js';

const project = (manifest: SerializedProject['manifest']): SerializedProject => ({
  id: '6372d770-47f0-41fb-b668-84a73d370054', name: 'demo', namespace: 'default', repo_url: '/srv/demo', default_branch: 'main',
  description: null, credentials_secret: null, default_branch_sha: 'a90e232223f16f47ee65576a3ae613635699e520', manifest,
  triggers: [], trigger_errors: [], conditions: [], created_at: null,
});

describe('the manifest column of svc projects ls and show', () => {
  it('says missing when the branch has no manifest (not "none invalid")', () => {
    const missing = project({ file: null, version: null, valid: false, issues: [] });
    expect(formatProjectList([missing])[1]).toMatch(/main\s+missing\s+0$/);
    expect(formatProject(missing)).toContain('Manifest:       missing');
  });

  it('names the file and whether it is valid, and "-" before the first reconcile', () => {
    expect(formatProject(project({ file: 'svc.yaml', version: 2, valid: true, issues: [] }))).toContain('Manifest:       svc.yaml valid (version 2)');
    expect(formatProject(project({ file: 'svc.toml', version: null, valid: false, issues: [{ path: 'agents', message: 'bad' }] })))
      .toEqual(expect.arrayContaining(['Manifest:       svc.toml invalid', '  agents: bad']));
    expect(formatProjectList([project(null)])[1]).toMatch(/main\s+-\s+0$/);
  });

  it('lists the triggers under a bare heading, or says none', () => {
    const valid = project({ file: 'svc.yaml', version: 2, valid: true, issues: [] });
    expect(formatProject(valid)).toContain('Triggers:       none');
    const lines = formatProject({ ...valid, triggers: [{ slug: 'tick', type: 'cron', cron: '0 * * * * *' }, { slug: 'launch', type: 'cron', run_at: '2030-01-31T09:00:00.000Z' }] as SerializedProject['triggers'] });
    expect(lines).toContain('  launch  cron  once at 2030-01-31T09:00:00.000Z'); // a run_at trigger says when
    expect(lines.slice(lines.indexOf('Triggers:'), lines.indexOf('Triggers:') + 2)).toEqual(['Triggers:', '  tick  cron  0 * * * * *']);
  });
});

describe('svc projects create --repo: a relative path on this machine is made absolute', () => {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'svc-repo-path-'));
  mkdirSync(path.join(cwd, 'demo.git'));
  it.each<[string, string]>([
    ['./demo.git', path.join(cwd, 'demo.git')],
    ['demo.git', path.join(cwd, 'demo.git')],
    ['../' + path.basename(cwd) + '/demo.git', path.join(cwd, 'demo.git')],
  ])('%s is there: absolute', (given, expected) => {
    expect(localRepoPath(given, cwd)).toBe(expected);
  });
  it.each(['./missing.git', '/srv/demo.git', 'https://git.example.com/org/web.git', 'ssh://git@host/r.git', 'git@github.com:org/web.git', 'host:demo.git', 'file:///srv/demo.git'])('%s goes as given', (given) => {
    expect(localRepoPath(given, cwd)).toBe(given);
  });
});
