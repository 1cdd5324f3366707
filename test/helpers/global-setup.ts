// Runs once before the test files. The machines' `kubectl` may be gcloud's dispatcher, which
// starts the versioned kubectl beside it: every call pays two Go starts, about 0.36 s of CPU
// instead of 0.18 here, and the suite calls kubectl about 800 times on two cores. The tests put
// the binary the dispatcher stands for first on PATH: a real kubectl, one start
// (docs/development.md, "Tests").
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dispatchedKubectl } from './kubectl-binaries.js';

export default function setup(): () => void {
  const kubectl = dispatchedKubectl();
  if (!kubectl) return () => undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-test-bin-'));
  symlinkSync(kubectl, path.join(dir, 'kubectl'));
  process.env.PATH = `${dir}${path.delimiter}${process.env.PATH ?? ''}`;
  return () => rmSync(dir, { recursive: true, force: true });
}
