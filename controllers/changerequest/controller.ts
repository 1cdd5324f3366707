// The ChangeRequest controller (on the runtime's object reconciler): the reconciling the API
// used to do on reads and on a timer. It settles merge claims whose merger died or restarted,
// forgets an originating session that was deleted, and delivers request-changes notes to the
// originating session (docs/change-requests.md, docs/resources.md for who writes what). The
// pure decision is decide.ts.
import { openMirror } from '../../src/git/index.js';
import { isNotFound, readGitCredentials, readSecretData, retryOnConflict } from '../../src/kube/index.js';
import { objectController, type ControllerDefinition, type ObjectKey, type ReconcileContext } from '../../src/runtime/index.js';
import type { Observed, ReplicaLease } from '../../src/changerequests/merge-claim.js';
import {
  CHANGE_REQUEST, CHANGE_REQUESTS_BY_ORIGIN_INDEX, LEASE, PENDING_PROMPTS_ANNOTATION, PROJECT, SESSION, STOP_REASON_ANNOTATION, apiReplicaLeaseName, appendPrompts,
  type ChangeRequest, type KubeObject, type Project, type Session,
} from '../../src/resources/index.js';
import { decideChangeRequest, type ChangeRequestFacts, type ChangeRequestSettings, type ChangeRequestStep } from './decide.js';

export interface ChangeRequestControllerOptions {
  /** Directory of the bare mirrors (shared with the Project controller). */
  mirrorDir: string;
  /** Namespace of the API replicas' heartbeat Leases (SVC_NAMESPACE). */
  replicaNamespace: string;
  /** A merge claim older than this is dead (default 10 minutes, SVC_MERGE_CLAIM_TIMEOUT_SECONDS). */
  claimTimeoutMs?: number;
  /** How long a queued note waits to be taken before it is reported undelivered (default 5 minutes). */
  feedbackTimeoutMs?: number;
  now?: () => Date;
}

type LeaseObject = KubeObject & { spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number } };

/** The CRs that name `session` as their origin, of its namespace (indexed: every Session event asks). */
function originOf(session: KubeObject, ctx: ReconcileContext): ObjectKey[] {
  const namespace = session.metadata.namespace ?? '';
  return ctx.resource<ChangeRequest>(CHANGE_REQUEST).indexed(CHANGE_REQUESTS_BY_ORIGIN_INDEX, `${namespace}/${session.metadata.name}`)
    .map((cr) => ({ namespace, name: cr.metadata.name! }));
}

export function changeRequestController(options: ChangeRequestControllerOptions): ControllerDefinition {
  const settings: ChangeRequestSettings = { claimTimeoutMs: options.claimTimeoutMs ?? 10 * 60_000, feedbackTimeoutMs: options.feedbackTimeoutMs ?? 5 * 60_000 };

  async function replicaOf(ctx: ReconcileContext, holder: string): Promise<ReplicaLease | null> {
    const lease = await ctx.client.resource<LeaseObject>(LEASE).find(options.replicaNamespace, apiReplicaLeaseName(holder));
    if (!lease?.spec) return null;
    return { holderIdentity: lease.spec.holderIdentity ?? '', renewTime: lease.spec.renewTime ?? null, leaseDurationSeconds: lease.spec.leaseDurationSeconds ?? 30 };
  }

  /** The live tips of an open CR and whether its claimed head is in the base; null when the repository cannot be read now. */
  async function tipsOf(ctx: ReconcileContext, project: Project, cr: ChangeRequest): Promise<Observed | null> {
    try {
      const lookup = await readGitCredentials(project, (namespace, name) => readSecretData(ctx.client, namespace, name));
      if (!lookup.ok) return null;
      const mirror = openMirror({ cacheDir: options.mirrorDir, projectId: project.metadata.uid!, url: project.spec.repoUrl, credentials: lookup.credentials });
      await mirror.fetch({ force: true });
      const branches = await mirror.branches();
      const head = branches[cr.spec.headRef];
      const base = branches[cr.spec.baseRef];
      if (!head || !base) return null;
      return { head, base, merged: await mirror.mergeOf(base, cr.status?.mergeClaim?.headSha ?? head) };
    } catch (error) {
      ctx.log.info('the repository cannot be read now; the claim is settled later', { error: (error as Error).message });
      return null;
    }
  }

  async function observe(cr: ChangeRequest, ctx: ReconcileContext): Promise<ChangeRequestFacts> {
    const namespace = cr.metadata.namespace!;
    const project = ctx.resource<Project>(PROJECT).get(namespace, cr.spec.projectRef.name) ?? null;
    const originId = cr.spec.originSessionId;
    // While a note waits, the session is read live: the cache may not show the prompt just queued yet.
    const waiting = cr.status?.feedback?.some((r) => r.state === 'queued');
    const origin = !originId ? undefined
      : waiting ? (await ctx.resource<Session>(SESSION).client.find(namespace, originId)) ?? null
        : ctx.resource<Session>(SESSION).get(namespace, originId) ?? null;
    const claim = cr.status?.status === 'open' ? cr.status.mergeClaim : null;
    if (!claim || !project) return { project, origin };
    return { project, origin, replica: await replicaOf(ctx, claim.holder), tips: await tipsOf(ctx, project, cr) };
  }

  async function perform(cr: ChangeRequest, step: ChangeRequestStep, ctx: ReconcileContext): Promise<{ observed?: Partial<ChangeRequestFacts>; object?: ChangeRequest }> {
    const namespace = cr.metadata.namespace!;
    const sessions = ctx.resource<Session>(SESSION).client;
    switch (step.kind) {
      case 'forget-origin': {
        // The cache may not have a Session created a moment ago: only a live miss forgets it.
        const live = await sessions.find(namespace, step.session);
        if (live) return { observed: { origin: live } };
        const object = await ctx.resource<ChangeRequest>(CHANGE_REQUEST).mergePatch(namespace, cr.metadata.name!, {
          metadata: { resourceVersion: cr.metadata.resourceVersion }, spec: { originSessionId: null },
        });
        return { object, observed: { origin: undefined } };
      }
      case 'queue-feedback': {
        const queued: NonNullable<ChangeRequestFacts['queued']> = {};
        await retryOnConflict(async () => {
          let current: Session;
          try {
            current = await sessions.get(namespace, step.session);
          } catch (error) {
            if (!isNotFound(error)) throw error;
            for (const note of step.notes) queued[note.index] = { state: 'undelivered', message: `session ${step.session} was deleted` };
            return;
          }
          if (current.status?.status === 'failed') {
            for (const note of step.notes) queued[note.index] = { state: 'undelivered', message: `session ${step.session} failed (${current.status.reason ?? 'unknown'}); start a new session` };
            return;
          }
          // a session that cannot run has its waiting prompts full: such a note is not queued, and the reviewer is told
          const at = new Date().toISOString();
          const { prompts, refused } = appendPrompts(current, step.notes.map((note) => ({ id: note.promptId, text: note.text, source: 'feedback' as const, at })));
          const written = step.notes.filter((note) => !refused.has(note.promptId));
          for (const note of step.notes) {
            const why = refused.get(note.promptId);
            if (why) queued[note.index] = { state: 'undelivered', message: `${why}: this note was not queued; request changes again once it took them` };
          }
          if (!written.length) return;
          // queued prompts wake a stopped session (the prompt route does the same); the read version is the precondition
          await ctx.resource<Session>(SESSION).mergePatch(namespace, step.session, {
            metadata: {
              resourceVersion: current.metadata.resourceVersion,
              annotations: { [PENDING_PROMPTS_ANNOTATION]: JSON.stringify(prompts), [STOP_REASON_ANNOTATION]: null },
            },
            spec: { desiredState: 'running' },
          });
          for (const note of written) queued[note.index] = { state: 'queued', message: `queued on session ${step.session}` };
        }, { attempts: 5 });
        return { observed: { queued } };
      }
    }
  }

  return objectController<ChangeRequest, ChangeRequestFacts, ChangeRequestStep>({
    name: 'changerequest',
    for: CHANGE_REQUEST,
    concurrency: 2,
    // no predicates: the API's status writes (a note, a claim) are what it acts on
    watches: [
      // the originating session went (forget it), took a note (delivered) or failed
      { type: SESSION, map: originOf },
    ],
    now: options.now,
    observe,
    compute: (cr, facts, now) => decideChangeRequest(cr, facts, settings, now),
    perform,
  });
}
