/** The only gateway to the Kubernetes API (the only importer of @kubernetes/client-node). */
export * from './backoff.js';
export * from './cache.js';
export * from './client.js';
export * from './config.js';
export * from './errors.js';
export * from './git-credentials.js';
export * from './informer.js';
export * from './recent-writes.js';
