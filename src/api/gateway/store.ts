// What the model gateway reads and writes in the cluster (docs/gateway.md). The data path reads
// only from caches (a model request must not wait for the API server); writes and the reads a
// budget decision needs go to the API server.
import type {
  ConfigMapObject, LlmProvidersSecret, Project, Session,
} from '../../resources/index.js';

/** A write lost to a concurrent one (resourceVersion precondition, or create of an existing object). */
export class GatewayWriteConflict extends Error {}

export interface GatewayStore {
  /** The API's one Project-by-uid lookup (project-lookup.ts): the cache, a rate-limited live read on a miss. */
  findProject(namespace: string, uid: string): Promise<Project | undefined>;

  // --- cached (informers; synced before the API reports ready)
  cachedProjectByName(namespace: string, name: string): Project | undefined;
  cachedSession(namespace: string, id: string): Session | undefined;
  /** The `sandboxToken` of the Session Secret `svc-session-<id>`. */
  cachedSandboxToken(namespace: string, sessionId: string): string | undefined;
  cachedProviders(project: Project): LlmProvidersSecret | undefined;
  cachedLedger(project: Project): ConfigMapObject | undefined;
  /** The slug of a Trigger resource, or null. */
  cachedTriggerSlug(namespace: string, name: string): string | null;

  // --- direct
  readProviders(project: Project): Promise<LlmProvidersSecret | undefined>;
  /** Creates (no resourceVersion) or replaces (with it as precondition); GatewayWriteConflict when it lost a race. */
  writeProviders(secret: LlmProvidersSecret): Promise<void>;
  readConfigMap(namespace: string, name: string): Promise<ConfigMapObject | undefined>;
  /** Creates (no resourceVersion) or replaces (precondition); GatewayWriteConflict when it lost a race. */
  writeConfigMap(cm: ConfigMapObject): Promise<void>;
  /** Creates a write-once object; one that already exists is fine. */
  createOnce(cm: ConfigMapObject): Promise<void>;
  deleteConfigMap(namespace: string, name: string): Promise<void>;
  recordEvent(obj: Project | Session, event: { type: 'Normal' | 'Warning'; reason: string; message: string }): Promise<void>;
}
