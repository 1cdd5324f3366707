// The git gateway's domain (SPEC §4.4, DESIGN §4): who may use the gateway, the clone credential,
// and the project's mirror. A sandbox proves itself with its sandbox token (kept in the Session's
// Secret) to get a clone credential; git then presents that credential as HTTP Basic.
import { DEFAULT_MAX_PUSH_BYTES, openMirror, type BasicCredentials, type GitCredentials, type Mirror } from '../../git/index.js';
import type { CloneCredential } from '../../lib/git-credential.js';
import { sandboxTokenSession, secretsEqual, signCloneCredential, verifyCloneCredential } from '../../lib/sandbox-token.js';
import { checkpointRef } from '../../lib/session-refs.js';
import { CHECKPOINT_PUSHED_ANNOTATION, controllerOf, parseCheckpointPushed, sessionCredentialsLive, type Project, type Session } from '../../resources/index.js';
import { ApiError } from '../errors.js';
import { UUID } from '../ids.js';

/** What the gateway reads from the cluster. */
export interface GitGatewayStore {
  findProject(namespace: string, uid: string): Promise<Project | undefined>;
  findSession(namespace: string, sessionId: string): Promise<Session | undefined>;
  /** The `sandboxToken` key of the Session's Secret `svc-session-<id>`. */
  sandboxToken(namespace: string, sessionId: string): Promise<string | undefined>;
  /** The project's own credentials for its host (null: none needed). */
  gitCredentials(project: Project): Promise<GitCredentials | null>;
  /** Merge-patches the annotations of a Session; a Session that is gone is no error. */
  annotateSession(namespace: string, sessionId: string, annotations: Record<string, string>): Promise<void>;
}

export interface GitGatewayOptions {
  store: GitGatewayStore;
  /** The change-request service's mirror dir: a push is seen by the CR routes at once. */
  mirrorDir: string;
  /** Largest push body accepted (SVC_GIT_MAX_PUSH_BYTES; default 512 MiB): 413 beyond. */
  maxPushBytes?: number;
  now?: () => number;
}

/** A request the gateway let through: the project and the session whose branch it may push. */
export interface GatewayCaller {
  project: Project;
  sessionId: string;
  /** The Session as read when the request was authenticated. */
  session: Session;
}


export class Unauthenticated extends ApiError {
  constructor(message: string, readonly scheme: 'Basic' | 'Bearer') {
    super(401, message);
  }
}

export class GitGatewayService {
  private readonly now: () => number;

  constructor(private readonly options: GitGatewayOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * The project and its live session `sessionId`, or undefined (either missing, deleting, not
   * related, or the session stopped or failed: its credentials died with it).
   */
  private async sessionOfProject(namespace: string, projectId: string, sessionId: string): Promise<GatewayCaller | undefined> {
    if (!UUID.test(projectId) || !UUID.test(sessionId)) return undefined;
    const [project, session] = await Promise.all([
      this.options.store.findProject(namespace, projectId),
      this.options.store.findSession(namespace, sessionId),
    ]);
    if (!project || project.metadata.deletionTimestamp || !session || !sessionCredentialsLive(session)) return undefined;
    const owner = controllerOf(session);
    if (session.spec.projectRef.name !== project.metadata.name || (owner && owner.uid !== project.metadata.uid)) return undefined;
    return { project, sessionId, session };
  }

  /** `GET .../git/clone-credential` with the sandbox token as bearer; 401 for any other token. */
  async cloneCredential(namespace: string, projectId: string, bearer: string | undefined): Promise<CloneCredential> {
    const refused = new Unauthenticated('a sandbox token is required: Authorization: Bearer $SVC_SANDBOX_TOKEN of a live session of this project (a stopped or failed session\'s credentials are refused)', 'Bearer');
    const sessionId = bearer ? sandboxTokenSession(bearer) : undefined;
    if (!bearer || !sessionId) throw refused;
    const caller = await this.sessionOfProject(namespace, projectId, sessionId);
    const stored = caller && (await this.options.store.sandboxToken(namespace, sessionId));
    if (!caller || !stored || !secretsEqual(stored, bearer)) throw refused;
    return signCloneCredential(stored, caller.project.metadata.uid!, sessionId, this.now());
  }

  /** git's HTTP Basic credential (username = session id, password = the signed clone credential). */
  async authenticateGit(namespace: string, projectId: string, credential: BasicCredentials | null): Promise<GatewayCaller> {
    const refused = new Unauthenticated('the clone credential is missing, wrong or expired, or its session stopped: git asks the credential helper for a new one', 'Basic');
    if (!credential) throw refused;
    const caller = await this.sessionOfProject(namespace, projectId, credential.username);
    const token = caller && (await this.options.store.sandboxToken(namespace, credential.username));
    if (!caller || !token || !verifyCloneCredential(token, caller.project.metadata.uid!, credential.username, credential.password, this.now())) throw refused;
    return caller;
  }

  /**
   * After a push of the session: when it moved the session's checkpoint ref, says so on the Session
   * (CHECKPOINT_PUSHED_ANNOTATION), so that a stop's checkpoint shows on a stopped session.
   */
  async noteCheckpoint(caller: GatewayCaller, mirror: Mirror): Promise<void> {
    const { session, sessionId } = caller;
    const sha = await mirror.refTip(checkpointRef(sessionId));
    // known already (the Session as the push's authentication read it): nothing to write
    if (!sha || parseCheckpointPushed(session.metadata.annotations?.[CHECKPOINT_PUSHED_ANNOTATION])?.sha === sha || session.status?.checkpoint?.sha === sha) return;
    await this.options.store.annotateSession(session.metadata.namespace!, sessionId, { [CHECKPOINT_PUSHED_ANNOTATION]: `${new Date(this.now()).toISOString()} ${sha}` });
  }

  /** The project's bare mirror (shared with the change-request service). */
  async mirror(project: Project): Promise<Mirror> {
    return openMirror({
      cacheDir: this.options.mirrorDir,
      projectId: project.metadata.uid!,
      url: project.spec.repoUrl,
      credentials: await this.options.store.gitCredentials(project),
      maxAgeMs: 0,
    });
  }

  get mirrorDir(): string {
    return this.options.mirrorDir;
  }

  get maxPushBytes(): number {
    return this.options.maxPushBytes ?? DEFAULT_MAX_PUSH_BYTES;
  }
}

/** SVC_GIT_MAX_PUSH_BYTES: a positive whole number of bytes; unset or empty = the default (512 MiB). */
export function maxPushBytesFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.SVC_GIT_MAX_PUSH_BYTES?.trim();
  if (!raw) return DEFAULT_MAX_PUSH_BYTES;
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw new Error(`SVC_GIT_MAX_PUSH_BYTES must be a positive number of bytes, got ${JSON.stringify(raw)}`);
  return Number(raw);
}
