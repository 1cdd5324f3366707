// The Project kind as production runs it (objectController's reconcileObject) against a real git
// repository, with the cluster in memory: observe reads it, the outcome is written to it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/lib/log.js';
import { reconcileObject, type OutcomeWriter, type ReconcileContext } from '../../src/runtime/index.js';
import type { Project, ProjectStatus, Trigger } from '../../src/resources/index.js';
import { projectKind } from './controller.js';
import type { ProjectEvent, TriggerPlan } from './desired.js';
import type { ProjectWorld } from './observe.js';
import type { ReadRepository } from './repository.js';
import { repositoryReader } from './repository.js';
import { manifestWithTriggers } from '../../test/dev/util.js';

/** The world plus the writes: a Project reconcile outside the manager. */
interface ProjectCluster extends ProjectWorld {
  createTrigger(trigger: Trigger): Promise<void>;
  updateTrigger(trigger: Trigger): Promise<void>;
  deleteTrigger(trigger: Trigger): Promise<void>;
  patchStatus(project: Project, status: ProjectStatus): Promise<void>;
  recordEvent(project: Project, event: ProjectEvent): Promise<void>;
}

/** One reconcile through the production path, written to `cluster`. */
function projectReconciler(options: { cluster: ProjectCluster; readRepository: ReadRepository; resyncMs?: number }) {
  const { cluster } = options;
  const kind = projectKind({ mirrorDir: '', resyncMs: options.resyncMs, readRepository: options.readRepository, world: () => cluster });
  const writer: OutcomeWriter<Project> = {
    writeStatus: (p, status) => cluster.patchStatus(p, status),
    recordEvent: (p, event) => cluster.recordEvent(p, event as ProjectEvent),
    async applyChildren(_type, plan) {
      for (const trigger of plan.delete as Trigger[]) await cluster.deleteTrigger(trigger);
      for (const trigger of plan.update as Trigger[]) await cluster.updateTrigger(trigger);
      for (const trigger of plan.create as Trigger[]) await cluster.createTrigger(trigger);
    },
  };
  const ctx = { signal: new AbortController().signal, log: createLogger(() => {}) } as unknown as ReconcileContext;
  return async (p: Project): Promise<{ requeueAfterMs: number; plan: TriggerPlan | null; statusWritten: boolean }> => {
    const { outcome, statusWritten } = await reconcileObject(kind, p, ctx, writer);
    return { requeueAfterMs: outcome.requeueAfter ?? 0, plan: (outcome.children?.[0]?.plan as TriggerPlan | undefined) ?? null, statusWritten };
  };
}

// The same manifest the svc dev acceptance tests use: two valid triggers and one invalid.
const MANIFEST = manifestWithTriggers;

let root: string;
let repo: string;
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).trim();

function commitManifest(text: string): string {
  writeFileSync(path.join(repo, 'svc.yaml'), text);
  git('add', 'svc.yaml');
  git('commit', '-q', '-m', 'manifest');
  return git('rev-parse', 'HEAD');
}

class MemoryCluster implements ProjectCluster {
  triggers = new Map<string, Trigger>();
  events: ProjectEvent[] = [];
  writes: string[] = [];
  statuses: ProjectStatus[] = [];
  secrets = new Map<string, Record<string, string>>();
  async readSecret(_ns: string, name: string) { return this.secrets.get(name) ?? null; }
  async listOwnedTriggers(project: Project) { return [...this.triggers.values()].filter((t) => t.metadata.ownerReferences?.[0]?.uid === project.metadata.uid); }
  async createTrigger(t: Trigger) { this.writes.push(`create ${t.metadata.name}`); this.triggers.set(t.metadata.name!, t); }
  async updateTrigger(t: Trigger) { this.writes.push(`update ${t.metadata.name}`); this.triggers.set(t.metadata.name!, t); }
  async deleteTrigger(t: Trigger) { this.writes.push(`delete ${t.metadata.name}`); this.triggers.delete(t.metadata.name!); }
  async patchStatus(_p: Project, status: ProjectStatus) { this.writes.push('status'); this.statuses.push(status); }
  async recordEvent(_p: Project, e: ProjectEvent) { this.events.push(e); }
}

const project: Project = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: 'web', namespace: 'default', uid: '11111111-1111-4111-8111-111111111111', generation: 1 },
  spec: { repoUrl: '', defaultBranch: 'main' },
};

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'svc-project-reconciler-'));
  repo = path.join(root, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  project.spec.repoUrl = repo;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('project reconciler', () => {
  const cluster = new MemoryCluster();
  const reconcile = projectReconciler({ cluster, readRepository: repositoryReader({ mirrorDir: '' }), resyncMs: 1234 });
  let current: Project;

  it('syncs the valid triggers, records status and events, and requeues after the interval', async () => {
    const sha = commitManifest(MANIFEST());
    const reconcileIn = projectReconciler({ cluster, readRepository: repositoryReader({ mirrorDir: path.join(root, 'mirrors') }), resyncMs: 1234 });
    const outcome = await reconcileIn(project);
    expect(outcome.requeueAfterMs).toBe(1234);
    expect([...cluster.triggers.keys()].sort()).toEqual(['web-nightly', 'web-on-push']);
    expect(cluster.triggers.get('web-on-push')!.spec).toMatchObject({ type: 'webhook', secretEnv: 'HOOK_SECRET', agent: 'coder', projectRef: { name: 'web' } });
    const status = cluster.statuses.at(-1)!;
    expect(status.defaultBranchSha).toBe(sha);
    expect(status.triggers).toEqual(['nightly', 'on-push']);
    expect(status.triggerErrors).toEqual([{ index: 2, slug: 'Broken', messages: expect.any(Array) }]);
    expect(status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Synced' });
    expect(cluster.events.map((e) => e.reason)).toEqual(['DefaultBranchRead', 'InvalidTriggers', 'TriggersSynced']);
    current = { ...project, status };
  });

  it('changes nothing when reconciled again', async () => {
    const reconcileIn = projectReconciler({ cluster, readRepository: repositoryReader({ mirrorDir: path.join(root, 'mirrors') }) });
    const before = cluster.writes.length;
    const events = cluster.events.length;
    const outcome = await reconcileIn(current);
    expect(outcome.statusWritten).toBe(false);
    expect(cluster.writes.length).toBe(before);
    expect(cluster.events.length).toBe(events);
  });

  it('follows a pushed change: adds a new trigger, updates a changed one', async () => {
    commitManifest(MANIFEST(`  - slug: weekly\n    type: cron\n    cron: "0 0 4 * * 1"\n    prompt: weekly\n`).replace("Review yesterday's changes", "Review yesterday's changes again"));
    const reconcileIn = projectReconciler({ cluster, readRepository: repositoryReader({ mirrorDir: path.join(root, 'mirrors') }) });
    cluster.writes = [];
    await reconcileIn({ ...current, metadata: { ...current.metadata, annotations: { 'svc.dev/refresh': 'one' } } });
    expect(cluster.writes).toEqual(['update web-nightly', 'create web-weekly', 'status']);
    expect(cluster.statuses.at(-1)!.lastRefreshToken).toBe('one');
    current = { ...current, status: cluster.statuses.at(-1)! };
  });

  it('keeps triggers and the last good status when the repository is unreachable', async () => {
    renameSync(repo, `${repo}.moved`);
    try {
      const reconcileIn = projectReconciler({ cluster, readRepository: repositoryReader({ mirrorDir: path.join(root, 'mirrors') }) });
      cluster.writes = [];
      await reconcileIn(current);
      expect(cluster.writes).toEqual(['status']);
      const status = cluster.statuses.at(-1)!;
      expect(status.defaultBranchSha).toBe(current.status!.defaultBranchSha);
      expect(status.triggers).toEqual(['nightly', 'on-push', 'weekly']);
      // the reason says which failure (issue 23); git's own words are in the message
      expect(status.conditions!.find((c) => c.type === 'RepositoryReachable')).toMatchObject({ status: 'False', reason: 'RepositoryNotFound', message: expect.stringMatching(/does not appear to be a git repository/) });
      expect(cluster.triggers.size).toBe(3);
      expect(cluster.events.at(-1)).toMatchObject({ type: 'Warning', reason: 'RepositoryUnreachable' });
    } finally {
      renameSync(`${repo}.moved`, repo);
    }
  });

  it('reports a missing credentials Secret without touching the repository', async () => {
    const withSecret: Project = { ...current, spec: { ...current.spec, gitCredentialsSecretRef: { name: 'nope' } } };
    await reconcile(withSecret);
    expect(cluster.statuses.at(-1)!.conditions!.find((c) => c.type === 'RepositoryReachable')).toMatchObject({ status: 'False', reason: 'CredentialsNotFound' });
  });
});
