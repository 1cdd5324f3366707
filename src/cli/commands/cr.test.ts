// Pure parts of `svc cr`: CR references, colouring, list formatting.
import { describe, expect, it } from 'vitest';
import { colorPatch, formatCr, formatCrList, parseCrRef, type CrView, type PreviewView } from './cr.js';

describe('svc cr helpers', () => {
  it('accepts 3, #3 or a UUID as a CR reference', () => {
    expect(parseCrRef('3')).toEqual({ number: 3 });
    expect(parseCrRef('#12')).toEqual({ number: 12 });
    expect(parseCrRef('0B9B1F5E-1111-4111-8111-111111111111')).toEqual({ id: '0b9b1f5e-1111-4111-8111-111111111111' });
    for (const bad of ['0', '#', 'three', '3a', '-1']) expect(() => parseCrRef(bad)).toThrow(/is not a change request/);
  });

  it('colours added, removed, hunk and header lines only', () => {
    const out = colorPatch('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same');
    expect(out.split('\n')).toEqual([
      '\x1b[1mdiff --git a/x b/x\x1b[0m', '\x1b[1m--- a/x\x1b[0m', '\x1b[1m+++ b/x\x1b[0m', '\x1b[36m@@ -1 +1 @@\x1b[0m',
      '\x1b[31m-old\x1b[0m', '\x1b[32m+new\x1b[0m', ' same',
    ]);
  });

  it('says so when nothing matches the filter', () => {
    expect(formatCrList([], 'open')).toEqual(['No open change requests.']);
    expect(formatCrList([], 'all')).toEqual(['No change requests.']);
  });

  it('a merged CR says who merged it, or that its head reached the base outside svc (merged_by null, not "by null")', () => {
    const merged = { number: 3, title: 't', cr_id: 'id', status: 'merged', head_ref: 'feat', base_ref: 'main', merged_at: '2026-12-01T20:01:05.756Z', merge_commit_sha: 'c'.repeat(40), created_by: 'u', metadata: { requested_changes: [] } } as unknown as CrView;
    expect(formatCr({ ...merged, merged_by: 'u1' } as CrView, null)).toContain(`Merged:      2026-12-01T20:01:05.756Z by u1 as ${'c'.repeat(12)}`);
    expect(formatCr({ ...merged, merged_by: null } as CrView, null)).toContain(`Merged:      2026-12-01T20:01:05.756Z outside svc (its head reached main another way) as ${'c'.repeat(12)}`);
  });

  it('a preview the manifest gate refuses never reads as mergeable', () => {
    const cr = { number: 3, title: 't', cr_id: 'id', status: 'open', head_ref: 'feat', base_ref: 'main', head_commit_sha: null, base_commit_sha: null, created_by: 'u', metadata: { requested_changes: [] } } as unknown as CrView;
    const preview: PreviewView = { base_sha: 'b', head_sha: 'h', merge_base: 'b', is_up_to_date: false, can_merge: true, can_fast_forward: true, conflicts: [] };
    const tail = (p: PreviewView) => { const lines = formatCr(cr, p); return lines.slice(lines.indexOf('Merge preview:') + 1); };
    expect(tail(preview)).toEqual(['  can fast-forward']);
    expect(tail({ ...preview, manifest_issues: [{ path: '/default_agent', message: 'is required' }, { path: '', message: 'x' }] })).toEqual([
      '  REFUSED by the manifest gate: the manifest on feat has 2 issues; fix them on the branch, then merge:',
      '    /default_agent: is required',
      '    (top level): x',
      '  then git: can fast-forward',
    ]);
    expect(tail({ ...preview, can_merge: false, can_fast_forward: false, conflicts: ['a.txt'], manifest_issues: [{ path: '/x', message: 'bad' }] })).toEqual([
      '  REFUSED by the manifest gate: the manifest on feat has 1 issue; fix it on the branch, then merge:',
      '    /x: bad',
      '  CONFLICTS in 1 file(s):',
      '    a.txt',
    ]);
    expect(tail({ ...preview, can_merge: false, can_fast_forward: false, conflicts: ['a.txt', 'b.txt'], conflicts_omitted: 3_000 })).toEqual([
      '  CONFLICTS in 3002 file(s):',
      '    a.txt',
      '    b.txt',
      '    and 3000 more, not listed',
    ]);
  });
});
