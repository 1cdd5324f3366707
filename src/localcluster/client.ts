// How a plain HTTP client reaches the local cluster: over https, trusting the cluster's own
// certificate, with a bearer token (every request is authenticated). For code that does not use
// a kubeconfig: svc dev's setup calls, the node simulator, tests.
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import { withoutTrailingSlashes } from '../lib/trailing-slashes.js';

/** Where the cluster is and how to get in. */
export interface ClusterAccess {
  url: string;
  /** Bearer token: the admin's (LocalCluster.token) or a ServiceAccount's. */
  token: string;
  /** The PEM certificate to trust (LocalCluster.ca). */
  ca: string;
}

export type ClusterFetch = (urlPath: string, init?: RequestInit) => Promise<Response>;

/** fetch() bound to the cluster: `urlPath` is appended to its URL, the token sent unless the caller sets `authorization`. */
export function clusterFetch(access: ClusterAccess): ClusterFetch {
  const dispatcher = new Agent({ connect: { ca: access.ca } });
  const base = withoutTrailingSlashes(access.url);
  return (urlPath, init = {}) => {
    const headers = new Headers(init.headers as ConstructorParameters<typeof Headers>[0]);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${access.token}`);
    return fetch(base + urlPath, { ...init, headers, dispatcher });
  };
}
