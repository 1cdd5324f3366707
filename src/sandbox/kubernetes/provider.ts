// The `kubernetes` sandbox provider (DESIGN.md §2): per sandbox a Secret and a Pod, both owned
// by the Sandbox. The Secret is written first, so the Pod never starts without its references.
import { isAlreadyExists, isNotFound, type KubeClient, type ResourceClient } from '../../kube/index.js';
import { POD, SECRET, controllerOf, type KubeObject } from '../../resources/index.js';
import type { OwnedCache, SandboxObservation, SandboxProvider, SandboxRef, SandboxRequest } from '../provider.js';
import { observePod } from './observe.js';
import { SANDBOX_CONTAINER, SANDBOX_POD, sandboxObjectName, sandboxPod, sandboxSecret, unbuildable } from './pod-spec.js';
import type { KubernetesSandboxSettings } from './settings.js';

/** `pods/log` has no byte tail: this many lines, then cut to the bytes asked for. */
const LOG_TAIL_LINES = 5000;

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

export class KubernetesSandboxProvider implements SandboxProvider {
  readonly name = 'kubernetes' as const;
  /** Its Pods: one deleted or ended is looked at at once (a daemon killed or frozen says nothing). */
  readonly owns = [SANDBOX_POD];
  private readonly pods: ResourceClient<KubeObject>;
  private readonly secrets: ResourceClient<KubeObject>;

  constructor(private readonly client: KubeClient, private readonly settings: KubernetesSandboxSettings, private readonly now: () => Date = () => new Date()) {
    this.pods = client.resource(POD);
    this.secrets = client.resource(SECRET);
  }

  /** The Pod or Secret of this Sandbox (a leftover of an earlier Sandbox of that name is not). */
  private async own(client: ResourceClient<KubeObject>, ref: SandboxRef): Promise<KubeObject | undefined> {
    const obj = await client.find(ref.namespace, sandboxObjectName(ref.name));
    return obj && controllerOf(obj)?.uid === ref.uid ? obj : undefined;
  }

  private observation(pod: KubeObject | undefined, secretExists: boolean): SandboxObservation {
    return observePod({ pod, secretExists, now: this.now(), provisioningDeadlineMs: this.settings.provisioningDeadlineMs, maxRestarts: this.settings.maxRestarts });
  }

  async observe(ref: SandboxRef, _signal?: AbortSignal, cached?: OwnedCache): Promise<SandboxObservation> {
    // the controller's cache when it holds this Sandbox's Pod (a watch keeps it: a change there
    // brings the next look); else the cluster, so that a Pod too new for the cache is never taken
    // for a deleted one
    const fromCache = cached?.(SANDBOX_POD).get(ref.namespace, sandboxObjectName(ref.name));
    const pod = fromCache && controllerOf(fromCache)?.uid === ref.uid ? fromCache : await this.own(this.pods, ref);
    return this.observation(pod, pod ? true : (await this.own(this.secrets, ref)) !== undefined);
  }

  async ensure(request: SandboxRequest): Promise<SandboxObservation> {
    const refused = unbuildable(request, this.settings);
    if (refused) return { state: 'failed', reason: 'NoBuildBackend', message: refused };
    const name = sandboxObjectName(request.name);
    const existing = await this.pods.find(request.namespace, name);
    if (existing && controllerOf(existing)?.uid === request.uid) return this.observation(existing, true);
    if (existing) {
      // an earlier Sandbox's pod under the same name: remove it and create ours next time
      await this.pods.delete(request.namespace, name, { uid: existing.metadata.uid }).catch(ignoreNotFound);
      return { state: 'provisioning', reason: 'Replacing', message: `removing the pod of an earlier sandbox named ${request.name}` };
    }
    await this.writeSecret(request);
    try {
      return this.observation(await this.pods.create(sandboxPod(request, this.settings)), true);
    } catch (err) {
      if (isAlreadyExists(err)) return this.observe(request);
      throw err;
    }
  }

  /** Creates the Secret, or replaces its data (tokens and project secrets of this start). */
  private async writeSecret(request: SandboxRequest): Promise<void> {
    const desired = sandboxSecret(request);
    try {
      await this.secrets.create(desired);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const current = await this.secrets.get(request.namespace, desired.metadata.name!);
      await this.secrets.replace({ ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata.resourceVersion } });
    }
  }

  /**
   * The sandbox container's log through `pods/log`: its current run, else its previous one (a
   * container that keeps exiting), cut to the last `maxBytes`.
   */
  async logTail(ref: SandboxRef, maxBytes: number): Promise<string | null> {
    const pod = await this.own(this.pods, ref);
    if (!pod) return null;
    const name = sandboxObjectName(ref.name);
    const read = (previous: boolean) => this.client.podLog(ref.namespace, name, { container: SANDBOX_CONTAINER, tailLines: LOG_TAIL_LINES, previous });
    const text = (await read(false)) || (await read(true));
    if (!text) return null;
    const bytes = Buffer.from(text, 'utf8');
    return bytes.length <= maxBytes ? text : bytes.subarray(bytes.length - maxBytes).toString('utf8');
  }

  async delete(ref: SandboxRef): Promise<void> {
    const name = sandboxObjectName(ref.name);
    for (const client of [this.pods, this.secrets]) {
      const obj = await client.find(ref.namespace, name);
      if (obj && controllerOf(obj)?.uid === ref.uid) await client.delete(ref.namespace, name, { uid: obj.metadata.uid }).catch(ignoreNotFound);
    }
  }
}
