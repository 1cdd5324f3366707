import { describe, expect, it } from 'vitest';
import { getCondition, type Project, type TriggerEntry } from '../../src/resources/index.js';
import { redact } from '../../src/git/index.js';
import { desiredTriggers, eventsFor, nextStatus, planTriggers, statusChanged, triggerEntryFromManifest, type Observation } from './desired.js';

const SHA1 = '1'.repeat(40);
const SHA2 = '2'.repeat(40);
const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:05:00Z');

function project(status?: Project['status'], annotations?: Record<string, string>): Project {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
    metadata: { name: 'web', namespace: 'default', uid: 'u-1', generation: 1, ...(annotations ? { annotations } : {}) },
    spec: { repoUrl: '/srv/web.git', defaultBranch: 'main' },
    ...(status ? { status } : {}),
  };
}

const nightly = triggerEntryFromManifest({ slug: 'nightly', type: 'cron', prompt: 'p', cron: '0 0 3 * * *', session_mode: 'REUSE' });
const hook = triggerEntryFromManifest({ slug: 'on_push', type: 'webhook', prompt_template: 'q', secret_env: 'HOOK', agent_name: 'coder' });

function read(triggers: TriggerEntry[], sha = SHA1, valid = true): Observation {
  return {
    kind: 'read', sha, triggers,
    manifest: {
      file: 'svc.yaml', version: 2, valid: false, parsed: true,
      issues: [{ path: '/triggers/2/cron', message: 'a cron trigger needs cron' }, ...(valid ? [] : [{ path: '/default_agent', message: 'required' }])],
    },
    triggerErrors: [{ index: 2, slug: 'broken', messages: ['cron or run_at is required'] }],
  };
}

describe('triggerEntryFromManifest', () => {
  it('maps snake_case and aliases to the Trigger spec entry with defaults', () => {
    expect(nightly).toEqual({ slug: 'nightly', type: 'cron', prompt: 'p', name: 'nightly', agent: 'default', sessionMode: 'reuse', enabled: true, timezone: 'UTC', cron: '0 0 3 * * *' });
    expect(hook).toMatchObject({ prompt: 'q', secretEnv: 'HOOK', agent: 'coder', sessionMode: 'fresh' });
  });
});

describe('desiredTriggers and planTriggers', () => {
  const desired = desiredTriggers(project(), [nightly, hook]);
  it('names each trigger <project>-<slug>, owned by the project', () => {
    expect(desired.map((t) => t.metadata.name)).toEqual(['web-nightly', expect.stringMatching(/^web-on-push-[0-9a-f]{10}$/)]);
    expect(desired[0]!.metadata.ownerReferences).toEqual([{ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: true }]);
    expect(desired[0]!.spec.projectRef).toEqual({ name: 'web' });
  });
  it('creates the missing, updates the changed, deletes the extra, and then plans nothing', () => {
    const stale = { ...desired[0]!, spec: { ...desired[0]!.spec, prompt: 'old' } };
    const extra = desiredTriggers(project(), [{ ...nightly, slug: 'gone' }])[0]!;
    const plan = planTriggers([stale, extra], desired);
    expect(plan.create.map((t) => t.metadata.name)).toEqual([desired[1]!.metadata.name]);
    expect(plan.update.map((t) => t.metadata.name)).toEqual(['web-nightly']);
    expect(plan.delete.map((t) => t.metadata.name)).toEqual(['web-gone']);
    // What the API server returns has other metadata; only spec and the label count.
    const stored = desired.map((t) => ({ ...t, metadata: { ...t.metadata, uid: 'x', resourceVersion: '9' } }));
    expect(planTriggers(stored, desired)).toEqual({ create: [], update: [], delete: [] });
  });
});

describe('nextStatus', () => {
  it('records tip, manifest, trigger slugs and errors with Ready True', () => {
    const status = nextStatus(project(undefined, { 'svc.dev/refresh': 'r1' }), read([nightly, hook]), T0);
    expect(status).toMatchObject({
      defaultBranchSha: SHA1, observedGeneration: 1, lastRefreshToken: 'r1', lastRefreshTime: '2026-01-01T00:00:00Z',
      manifest: { file: 'svc.yaml', version: 2, valid: false, issues: [{ path: '/triggers/2/cron', message: 'a cron trigger needs cron' }], summary: 'invalid (v2)' },
      triggers: ['nightly', 'on_push'],
      triggerCount: 2,
      triggerErrors: [{ index: 2, slug: 'broken', messages: ['cron or run_at is required'] }],
    });
    const byType = Object.fromEntries(status.conditions!.map((c) => [c.type, c]));
    expect(byType.Ready).toMatchObject({ status: 'True', reason: 'Synced' });
    expect(byType.RepositoryReachable).toMatchObject({ status: 'True', reason: 'Fetched' });
    expect(byType.ManifestValid).toMatchObject({ status: 'False', reason: 'InvalidTriggerEntries' });
    expect(byType.ManifestValid!.message).toContain('#2 (broken)');
  });

  it('hundreds of issues, all in skipped trigger entries, leave the manifest usable; the status lists the first 100 of them', () => {
    const bad = Array.from({ length: 300 }, (_, i) => i + 1);
    const observation: Observation = {
      kind: 'read', sha: SHA1, triggers: [nightly],
      manifest: { file: 'svc.yaml', version: 2, valid: false, parsed: true, issues: bad.map((i) => ({ path: `/triggers/${i}/cron`, message: 'is required' })) },
      triggerErrors: bad.map((index) => ({ index, messages: ['cron: is required'] })),
    };
    const status = nextStatus(project(), observation, T0);
    const byType = Object.fromEntries(status.conditions!.map((c) => [c.type, c]));
    expect(byType.ManifestValid).toMatchObject({ status: 'False', reason: 'InvalidTriggerEntries' });
    expect(byType.Ready).toMatchObject({ status: 'True' });
    expect(status.manifest!.issues).toHaveLength(101);
    expect(status.manifest!.issues[100]).toEqual({ path: '', message: 'and 200 more like these (the first 100 are listed)' });
    // the entries too: the first 100 kept, all counted, ten named in the condition and the Event
    expect(status.triggerErrors).toEqual(bad.slice(0, 100).map((index) => ({ index, messages: ['cron: is required'] })));
    expect(status.triggerErrorCount).toBe(300);
    expect(byType.ManifestValid!.message).toContain('valid except 300 trigger entries (#1, #2, #3, #4, #5, #6, #7, #8, #9, #10, and 290 more), skipped; status.triggerErrors lists the first 100');
    const events = eventsFor(undefined, status, null).filter((e) => e.reason === 'InvalidTriggers');
    expect(events).toEqual([{ type: 'Warning', reason: 'InvalidTriggers', message: `invalid trigger entries skipped: ${bad.slice(0, 10).map((i) => `#${i}: cron: is required`).join('; ')}; and 290 more` }]);
    // one more bad entry past the first 100 is news (the count changed), the same again is not
    const more = nextStatus(project(status), { ...observation, triggerErrors: [...observation.triggerErrors, { index: 301, messages: ['cron: is required'] }] }, T1);
    expect(eventsFor(status, more, null).map((e) => e.reason)).toContain('InvalidTriggers');
    expect(eventsFor(more, nextStatus(project(more), { ...observation, triggerErrors: [...observation.triggerErrors, { index: 301, messages: ['cron: is required'] }] }, T1), null)).toEqual([]);
    // one issue outside the trigger entries, after all of them, still makes it unusable
    const blocked = nextStatus(project(), { ...observation, manifest: { ...observation.manifest!, issues: [...observation.manifest!.issues, { path: '/default_agent', message: 'required' }] } }, T0);
    expect(Object.fromEntries(blocked.conditions!.map((c) => [c.type, c])).ManifestValid).toMatchObject({ reason: 'ManifestInvalid', message: expect.stringContaining('has 301 issues: /default_agent: required;') });
  });

  it('shows a slug longer than a slug may be cut to 128 characters', () => {
    const slug = 'x'.repeat(100_000);
    const observation: Observation = { kind: 'read', sha: SHA1, triggers: [nightly], manifest: { file: 'svc.yaml', version: 2, valid: false, parsed: true, issues: [] }, triggerErrors: [{ index: 0, slug, messages: ['slug: too long'] }] };
    const status = nextStatus(project(), observation, T0);
    expect(status.triggerErrors).toEqual([{ index: 0, slug: `${'x'.repeat(128)}…`, messages: ['slug: too long'] }]);
    expect(status.conditions!.find((c) => c.type === 'ManifestValid')!.message.length).toBeLessThan(400);
  });

  it('is idempotent: the same observation later changes nothing', () => {
    const first = nextStatus(project(), read([nightly]), T0);
    const second = nextStatus(project(first), read([nightly]), T1);
    expect(statusChanged(first, second)).toBe(false);
    expect(eventsFor(first, second, planTriggers([], []))).toEqual([]);
  });

  it('keeps the last good status when the repository becomes unreachable, and says why', () => {
    const good = nextStatus(project(), read([nightly]), T0);
    const bad = nextStatus(project(good), { kind: 'unreachable', reason: 'FetchFailed', message: 'could not fetch /srv/web.git: not found' }, T1);
    expect(bad).toMatchObject({ defaultBranchSha: SHA1, triggers: ['nightly'], manifest: good.manifest, lastRefreshTime: good.lastRefreshTime });
    const ready = bad.conditions!.find((c) => c.type === 'Ready')!;
    expect(ready).toMatchObject({ status: 'False', reason: 'RepositoryUnreachable', lastTransitionTime: '2026-01-01T00:05:00Z' });
    expect(ready.message).toBe('could not fetch /srv/web.git: not found; the last known manifest and triggers are kept');
    // never read: nothing is kept, and it says so
    const never = nextStatus(project(), { kind: 'unreachable', reason: 'RepositoryNotFound', message: 'could not fetch /srv/none.git: not found' }, T1);
    expect(never.conditions!.find((c) => c.type === 'Ready')!.message).toBe('could not fetch /srv/none.git: not found; nothing was read from it yet');
    expect(eventsFor(good, bad, null)).toEqual([{ type: 'Warning', reason: 'RepositoryUnreachable', message: 'could not fetch /srv/web.git: not found' }]);
  });

  it('says what is wrong with an invalid manifest and a missing one', () => {
    const invalid = nextStatus(project(), read([], SHA2, false), T0);
    expect(invalid.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ManifestInvalid' });
    expect(invalid.conditions!.find((c) => c.type === 'ManifestValid')!.message).toContain('/default_agent: required');
    const missing = nextStatus(project(), { kind: 'read', sha: SHA2, manifest: null, triggers: [], triggerErrors: [] }, T0);
    expect(missing.conditions!.find((c) => c.type === 'ManifestValid')).toMatchObject({ status: 'False', reason: 'ManifestMissing' });
    expect(missing.manifest?.summary).toBe('missing');
    const clean: Observation = { kind: 'read', sha: SHA1, triggers: [nightly], triggerErrors: [], manifest: { file: 'svc.yaml', version: 2, valid: true, parsed: true, issues: [], defaultAgent: 'coder' } };
    // default_agent: the agent of a Session applied with kubectl that names none
    expect(nextStatus(project(), clean, T0)).toMatchObject({ manifest: { summary: 'valid (v2)', defaultAgent: 'coder' }, triggerCount: 1 });
  });

  it('counts the issues it lists: every issue of status.manifest.issues, the blocking ones first', () => {
    const invalid = nextStatus(project(), read([], SHA2, false), T0);
    expect(invalid.manifest!.issues).toHaveLength(2);
    expect(invalid.conditions!.find((c) => c.type === 'Ready')!.message)
      .toBe(`svc.yaml at ${SHA2.slice(0, 12)} has 2 issues: /default_agent: required; /triggers/2/cron: a cron trigger needs cron; fix them on main`);
    const many: Observation = {
      kind: 'read', sha: SHA2, triggers: [], triggerErrors: [],
      manifest: { file: 'svc.yaml', version: 2, valid: false, parsed: true, issues: ['/a', '/b', '/c', '/d', '/e'].map((path) => ({ path, message: 'bad' })) },
    };
    expect(nextStatus(project(), many, T0).conditions!.find((c) => c.type === 'ManifestValid')!.message)
      .toBe(`svc.yaml at ${SHA2.slice(0, 12)} has 5 issues: /a: bad; /b: bad; /c: bad; and 2 more (status.manifest.issues); fix them on main`);
    const one: Observation = { ...many, manifest: { ...many.manifest!, issues: [{ path: '/a', message: 'bad' }] } } as Observation;
    expect(nextStatus(project(), one, T0).conditions!.find((c) => c.type === 'ManifestValid')!.message).toContain('has 1 issue: /a: bad;');
  });
});

describe('eventsFor', () => {
  it('reports the first read, invalid entries and the trigger sync', () => {
    const after = nextStatus(project(), read([nightly]), T0);
    const plan = planTriggers([], desiredTriggers(project(), [nightly]));
    expect(eventsFor(undefined, after, plan).map((e) => `${e.type}/${e.reason}`)).toEqual(['Normal/DefaultBranchRead', 'Warning/InvalidTriggers', 'Normal/TriggersSynced']);
    expect(eventsFor(undefined, after, plan).at(-1)!.message).toBe('created web-nightly');
  });
});

describe('credentials in the repository URL', () => {
  it('never reach the status conditions', () => {
    const secretUrl = 'https://bot:s3cret-pass@git.example/web.git';
    const withSecret: Project = { ...project(), spec: { repoUrl: secretUrl, defaultBranch: 'main' } };
    const reachable = nextStatus(withSecret, read([nightly]), T0);
    const missing = nextStatus(withSecret, { kind: 'branch-missing', sha: null }, T0);
    for (const status of [reachable, missing]) {
      const text = JSON.stringify(status.conditions);
      expect(text).not.toContain('s3cret-pass');
      expect(text).toContain('https://***@git.example/web.git');
      expect(status.repoUrl).toBe('https://***@git.example/web.git'); // the -o wide Repo column
    }
  });

  it('redacts token query parameters and warns in a condition and an Event while the URL carries one', () => {
    const secretUrl = 'https://gitlab.example/g/web.git?private_token=glpat-SECRET';
    const withSecret: Project = { ...project(), spec: { repoUrl: secretUrl, defaultBranch: 'main' } };
    const unreachable = nextStatus(withSecret, { kind: 'unreachable', reason: 'FetchFailed', message: `could not fetch ${redact(secretUrl)}` }, T0);
    const reachable = nextStatus(withSecret, read([nightly]), T0);
    for (const status of [unreachable, reachable]) {
      expect(JSON.stringify(status)).not.toContain('glpat-SECRET');
      expect(getCondition(status.conditions, 'RepoUrlCredentialFree')).toMatchObject({ status: 'False', reason: 'CredentialInRepoUrl' });
    }
    const events = eventsFor(undefined, reachable, null);
    expect(events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'CredentialInRepoUrl' }));
    expect(JSON.stringify(events)).not.toContain('glpat-SECRET');
    // cleaned up: the condition turns True; a URL that never had one gets no such condition
    const cleaned = nextStatus({ ...withSecret, status: reachable, spec: { repoUrl: 'https://gitlab.example/g/web.git', defaultBranch: 'main' } }, read([nightly]), T0);
    expect(getCondition(cleaned.conditions, 'RepoUrlCredentialFree')?.status).toBe('True');
    expect(getCondition(nextStatus(project(), read([nightly]), T0).conditions, 'RepoUrlCredentialFree')).toBeUndefined();
  });
});
