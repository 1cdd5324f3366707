// svc dev passes the operator's and the API's settings on from its environment, as the chart passes
// its values (docs/dev.md "Settings from the environment"): a setting either composition root reads
// is passed on, or dev decides it itself. This holds the list to what the roots read.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PASSED_ON_SETTINGS } from './dev.js';

/** What dev sets itself, for where it runs things (its ports, folders, namespace, the sandboxes' API). */
const SET_BY_DEV = ['SVC_HTTP_PORT', 'SVC_HTTP_HOST', 'SVC_HTTP_SANDBOX_HOST', 'SVC_MIRROR_DIR', 'SVC_NAMESPACE', 'SVC_PROJECT_NAMESPACE',
  'SVC_POD_NAME', 'SVC_SANDBOX_API_URL', 'SVC_SANDBOX_DIR', 'SVC_SANDBOX_PROVIDER', 'SVC_SANDBOX_HOST_PORTS', 'SVC_SANDBOX_MOUNTS',
  // dev's cluster is its own: its operator watches every namespace of it
  'SVC_WATCH_NAMESPACE'];

const readBy = (file: string) => new Set(readFileSync(new URL(file, import.meta.url), 'utf8').match(/SVC_[A-Z0-9_]+/g));

describe('the settings svc dev passes on', () => {
  it.each(['./operator-root.ts', './api-root.ts'])('covers every setting %s reads', (file) => {
    const missing = [...readBy(file)].filter((name) => !PASSED_ON_SETTINGS.includes(name) && !SET_BY_DEV.includes(name));
    expect(missing).toEqual([]);
  });

  it.each(['./sandbox-jail.ts', '../lib/jail/index.ts', '../lib/jail/net.ts'])('covers every setting the sandboxes\' jail reads in %s (the operator builds it for the process provider)', (file) => {
    // what the jail sets for the sandbox itself, not reads
    const missing = [...readBy(file)].filter((name) => !PASSED_ON_SETTINGS.includes(name) && !SET_BY_DEV.includes(name) && name !== 'SVC_SANDBOX_OWN_NETWORK');
    expect(missing).toEqual([]);
  });
});
