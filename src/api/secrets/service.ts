// Project secrets (SPEC §2.4): set, remove and list the names of a project's secrets, kept in the
// Secret of src/resources/project-secrets.ts. Values go into that Secret and nowhere else: not in
// a response, an Event, a log line or another resource.
import {
  projectSecretsName, secretListing, withSecret, withoutSecret,
  type ProjectSecretsSecret, type Project, type SecretListing,
} from '../../resources/index.js';
import { isConflict, retryOnConflict } from '../../kube/index.js';
import { ApiError } from '../errors.js';

export interface ProjectSecretsStore {
  findProject(namespace: string, uid: string): Promise<Project | undefined>;
  read(namespace: string, name: string): Promise<ProjectSecretsSecret | undefined>;
  /** Creates (no resourceVersion) or replaces (with the resourceVersion as precondition); ConflictError when it lost a race. */
  write(secret: ProjectSecretsSecret): Promise<void>;
  /** An Event on the Project (names only). */
  recordEvent(project: Project, reason: string, message: string): Promise<void>;
}

const WRITE_ATTEMPTS = 10;

export class ProjectSecretsService {
  constructor(private readonly store: ProjectSecretsStore, private readonly now: () => Date = () => new Date()) {}

  async project(namespace: string, projectId: string): Promise<Project> {
    const project = await this.store.findProject(namespace, projectId);
    if (!project || project.metadata.deletionTimestamp) throw new ApiError(404, `project ${projectId} not found`);
    return project;
  }

  async list(project: Project): Promise<SecretListing> {
    return secretListing(await this.store.read(project.metadata.namespace!, projectSecretsName(project)));
  }

  async set(project: Project, name: string, value: string): Promise<void> {
    await this.update(project, (current) => withSecret(project, current, name, value, this.now()));
    await this.event(project, 'SecretSet', `project secret ${name} set`);
  }

  async remove(project: Project, name: string): Promise<void> {
    const removed = await this.update(project, (current) => withoutSecret(current, name));
    if (!removed) throw new ApiError(404, `project ${project.metadata.name} has no secret ${name} (svc secrets ls lists them)`);
    await this.event(project, 'SecretDeleted', `project secret ${name} removed`);
  }

  /** Read, change, write with a precondition; again when another writer won. False when there was nothing to change. */
  private async update(project: Project, change: (current: ProjectSecretsSecret | undefined) => ProjectSecretsSecret | null): Promise<boolean> {
    const namespace = project.metadata.namespace!;
    try {
      return await retryOnConflict(async () => {
        const next = change(await this.store.read(namespace, projectSecretsName(project)));
        if (!next) return false;
        await this.store.write(next);
        return true;
      }, { attempts: WRITE_ATTEMPTS });
    } catch (error) {
      if (isConflict(error)) throw new ApiError(409, 'the project secrets changed concurrently too often: try again');
      throw error;
    }
  }

  private async event(project: Project, reason: string, message: string): Promise<void> {
    // best-effort: the secret is written; a lost Event must not fail the request
    await this.store.recordEvent(project, reason, message).catch(() => undefined);
  }
}
