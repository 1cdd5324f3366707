// `make build` compiles only when something it reads changed (docs/development.md, "Tests"): the
// Makefile is asked with `make -n` (print what would run, run nothing) in a folder laid out as a
// checkout whose files have the ages each case needs.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/dev.js';

const COMPILE = 'tsc -p tsconfig.build.json';
const BUNDLES = ['src/cli/bundle.mjs', 'src/main/bundle.mjs', 'daemon/bundle.mjs', 'web/build.mjs'];
const INPUTS = ['bin/svc.js', 'src/lib/duration.ts', 'src/lib/duration.test.ts', 'controllers/session/decide.ts', 'daemon/main.ts', 'web/src/main.tsx',
  'crds/sessions.yaml', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/system-packages.sh'];
const OUTPUTS = ['dist/src/cli/main.js', 'dist/cli/svc.mjs', 'dist/src/main/api.bundle.mjs', 'dist/src/main/operator.bundle.mjs', 'dist/daemon/svc-agent.mjs', 'dist/web/index.html'];

describe('make build', () => {
  let dir: string;
  const at = (file: string, seconds: number) => {
    const full = path.join(dir, file);
    mkdirSync(path.dirname(full), { recursive: true });
    if (file !== 'Makefile') writeFileSync(full, '');
    utimesSync(full, seconds, seconds);
  };
  const plan = () => execFileSync('make', ['-n', 'build'], { cwd: dir, encoding: 'utf8' });

  beforeEach(() => {
    // a checkout built once: its inputs at 1000, the install at 2000, the build's outputs and stamp at 3000
    dir = mkdtempSync(path.join(os.tmpdir(), 'svc-make-build-'));
    copyFileSync(path.join(REPO_ROOT, 'Makefile'), path.join(dir, 'Makefile'));
    for (const file of [...INPUTS, 'Makefile']) at(file, 1000);
    at('node_modules/.package-lock.json', 2000);
    for (const file of [...OUTPUTS, 'dist/.built']) at(file, 3000);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('does nothing when nothing it reads changed since it built', () => {
    expect(plan()).not.toContain(COMPILE);
  });

  it('does nothing when only a test changed', () => {
    at('src/lib/duration.test.ts', 4000);
    expect(plan()).not.toContain(COMPILE);
  });

  it.each(['src/lib/duration.ts', 'controllers/session/decide.ts', 'daemon/main.ts', 'web/src/main.tsx', 'crds/sessions.yaml', 'bin/svc.js', 'package.json', 'tsconfig.build.json', 'Makefile'])(
    'compiles and bundles again when %s changed',
    (file) => {
      at(file, 4000);
      const steps = plan();
      expect(steps).toContain(COMPILE);
      for (const bundle of BUNDLES) expect(steps).toContain(`node ${bundle}`);
    },
  );

  it('compiles again when a new source file appears, or the dependencies were installed again', () => {
    at('src/lib/new-module.ts', 4000);
    expect(plan()).toContain(COMPILE);
    rmSync(path.join(dir, 'src/lib/new-module.ts'));
    at('node_modules/.package-lock.json', 4000);
    expect(plan()).toContain(COMPILE);
  });

  it.each(OUTPUTS)('builds again when %s is missing', (file) => {
    rmSync(path.join(dir, file));
    expect(plan()).toContain(COMPILE);
  });
});
