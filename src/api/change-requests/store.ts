// What the change-request service needs from the cluster: a port, so the service is written
// against plain objects and kube-store.ts adapts it to the Kubernetes API.
import type { GitCredentials } from '../../git/index.js';
import type { ChangeRequest, ChangeRequestStatus, Project } from '../../resources/index.js';

/** A ChangeRequest with this number already exists (the counter was behind). */
export class NumberTakenError extends Error {
  constructor(readonly number: number) {
    super(`change request number ${number} is taken`);
    this.name = 'NumberTakenError';
  }
}

/** The project's git credentials Secret is missing or unusable. */
export class CredentialsUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsUnavailableError';
  }
}

export interface ChangeRequestEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface ChangeRequestStore {
  /** The Project of the namespace with this uid. */
  findProject(namespace: string, uid: string): Promise<Project | undefined>;
  /** The namespace's uid (SPEC account_id), or null when it cannot be read. */
  accountId(namespace: string): Promise<string | null>;
  /** Credentials from the Project's git credentials Secret; null when it names none. */
  gitCredentials(project: Project): Promise<GitCredentials | null>;
  /** Whether a Session with this id (its name) exists in the namespace. */
  sessionExists(namespace: string, sessionId: string): Promise<boolean>;
  list(project: Project): Promise<ChangeRequest[]>;
  get(project: Project, crId: string): Promise<ChangeRequest | undefined>;
  /**
   * Takes the next number of the project's counter (compare-and-swap; never handed out twice,
   * never lowered).
   */
  reserveNumber(project: Project): Promise<number>;
  /** Creates the resource and its status; NumberTakenError when the number's name exists. */
  create(project: Project, cr: ChangeRequest, status: ChangeRequestStatus): Promise<ChangeRequest>;
  /** Replaces the status at the read resourceVersion; ConflictError (src/kube) when it moved. */
  writeStatus(cr: ChangeRequest, status: ChangeRequestStatus): Promise<ChangeRequest>;
  /** Replaces title/description at the read resourceVersion; ConflictError (src/kube) when it moved. */
  writeSpec(cr: ChangeRequest, spec: ChangeRequest['spec']): Promise<ChangeRequest>;
  recordEvent(cr: ChangeRequest, event: ChangeRequestEvent): Promise<void>;
  /** Asks the Project controller to re-read the repository now (svc.dev/refresh annotation). */
  requestProjectRefresh(project: Project): Promise<void>;
}
