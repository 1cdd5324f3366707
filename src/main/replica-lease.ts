// An API replica's heartbeat: a coordination.k8s.io/v1 Lease in the API's namespace, named
// after the replica (apiReplicaLeaseName(SVC_POD_NAME)), holding this process's instance id and
// renewed every few seconds. The ChangeRequest controller reads it to tell whether the replica
// that took a merge claim still runs (docs/change-requests.md); nothing else depends on it. A
// clean stop empties the holder: the claims of this process are free at once.
import { ConflictError, isAlreadyExists, isNotFound, retryOnConflict, type KubeClient, type KubeError } from '../kube/index.js';
import { microTime, type Lease } from '../runtime/index.js';
import { LEASE, apiReplicaLeaseName } from '../resources/index.js';

export interface ReplicaHeartbeatOptions {
  client: KubeClient;
  namespace: string;
  /** The replica (SVC_POD_NAME, else the host name) and this process (a new id per start). */
  holder: string;
  instance: string;
  durationSeconds?: number;
  log?: (message: string) => void;
}

export function replicaHeartbeat(options: ReplicaHeartbeatOptions): { start(): Promise<void>; stop(): Promise<void> } {
  const leases = options.client.resource<Lease>(LEASE);
  const name = apiReplicaLeaseName(options.holder);
  const durationSeconds = options.durationSeconds ?? 30;
  let timer: NodeJS.Timeout | undefined;

  async function write(holderIdentity: string): Promise<void> {
    const spec = { holderIdentity, leaseDurationSeconds: durationSeconds, renewTime: microTime(new Date()) };
    await retryOnConflict(async () => {
      const current = await leases.find(options.namespace, name);
      if (!current) {
        try {
          await leases.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: options.namespace }, spec });
        } catch (error) {
          if (!isAlreadyExists(error)) throw error;
          throw new ConflictError(`create Lease ${options.namespace}/${name}`, error as KubeError); // created meanwhile: read it again
        }
        return;
      }
      await leases.replace({ ...current, spec: { ...current.spec, ...spec } });
    }, { attempts: 3 });
  }

  const beat = () => write(options.instance).catch((error: Error) => options.log?.(`the replica heartbeat Lease ${options.namespace}/${name} could not be renewed: ${error.message}`));
  return {
    async start() {
      await beat();
      timer = setInterval(() => void beat(), Math.max(1000, (durationSeconds * 1000) / 3));
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await write('').catch((error: Error) => { if (!isNotFound(error)) options.log?.(`releasing the replica heartbeat failed: ${error.message}`); });
    },
  };
}
