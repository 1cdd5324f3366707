// Kubernetes `Status` bodies and the one error type every handler throws.
export interface StatusCause { reason: string; message: string; field?: string }
export interface StatusDetails { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number }

export type KObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
};
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
  [key: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): KObject {
    return statusBody(this.code, this.reason, this.message, this.details);
  }
}

export function statusBody(code: number, reason: string, message: string, details?: StatusDetails): KObject {
  const body: KObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) body.details = details;
  return body;
}

export function successStatus(details: StatusDetails): KObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/** `configmaps "x"` or `widgets.example.com "x"`, as the real server names a resource in messages. */
export function resourceLabel(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

export const errors = {
  notFound: (group: string, plural: string, name: string) =>
    new ApiError(404, 'NotFound', `${resourceLabel(group, plural)} "${name}" not found`, { name, group: group || undefined, kind: plural }),
  alreadyExists: (group: string, plural: string, name: string) =>
    new ApiError(409, 'AlreadyExists', `${resourceLabel(group, plural)} "${name}" already exists`, { name, group: group || undefined, kind: plural }),
  conflict: (group: string, plural: string, name: string) =>
    new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${resourceLabel(group, plural)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, group: group || undefined, kind: plural },
    ),
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  notAcceptable: (message: string) => new ApiError(406, 'NotAcceptable', message),
  unsupportedMediaType: (message: string) => new ApiError(415, 'UnsupportedMediaType', message),
  methodNotAllowed: (message: string) => new ApiError(405, 'MethodNotAllowed', message),
  forbidden: (message: string, details?: StatusDetails) => new ApiError(403, 'Forbidden', message, details),
  gone: (message: string) => new ApiError(410, 'Expired', message),
  internal: (message: string) => new ApiError(500, 'InternalError', message),
  pathNotFound: (path: string) => new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`),
  /** 422 with one cause per field, worded like the real server. */
  invalid: (kind: string, group: string, name: string, causes: StatusCause[]) => {
    const qualified = group ? `${kind}.${group}` : kind;
    const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
    const joined = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
    return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${joined}`, { name, group: group || undefined, kind, causes });
  },
};
