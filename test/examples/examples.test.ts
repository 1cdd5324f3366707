// examples/: the commented svc.yaml is valid and declares a cron, a run_at and a webhook
// trigger; examples/project.yaml is a Project the CRD accepts (checked by svc dev's tests).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkManifest, listTriggers } from '../../src/manifest/index.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples');

describe('examples/svc.yaml', () => {
  const text = readFileSync(path.join(EXAMPLES, 'svc.yaml'), 'utf8');
  const check = checkManifest('svc.yaml', text);

  it('is a valid version 2 manifest', () => {
    expect(check.issues).toEqual([]);
    expect(check).toMatchObject({ valid: true, version: 2 });
  });

  it('lists a cron, a run_at and a webhook trigger, and no invalid entry', () => {
    const listing = listTriggers(check);
    expect(listing.errors).toEqual([]);
    const bySlug = Object.fromEntries(listing.triggers.map((t) => [t.slug, t]));
    expect(bySlug.nightly).toMatchObject({ type: 'cron', cron: '0 0 3 * * *', timezone: 'Europe/Paris' });
    expect(bySlug['launch-day']).toMatchObject({ type: 'cron', run_at: '2030-01-31T09:00:00.000Z' });
    expect(bySlug['on-push']).toMatchObject({ type: 'webhook', secret_env: 'GH_WEBHOOK_SECRET', session_mode: 'reuse', agent: 'triage' });
  });

  it('explains itself: every trigger has a comment above it', () => {
    for (const slug of ['nightly', 'launch-day', 'on-push']) {
      expect(text).toMatch(new RegExp(`#[^\\n]*\\n(?:\\s*#[^\\n]*\\n)*\\s*- slug: ${slug}\\n`));
    }
  });
});

describe('README: the npm warnings a newcomer sees during make install', () => {
  it('names every locked package with an install script in its note on npm install-scripts warnings', () => {
    const root = path.resolve(EXAMPLES, '..');
    const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([k]) => k.replace(/^.*node_modules\//, ''));
    expect(withScripts.length).toBeGreaterThan(0);
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const note = /npm 11 prints `npm warn install-scripts[\s\S]*?\n\n/.exec(readme)?.[0] ?? '';
    for (const name of withScripts) expect(note, name).toContain(name);
  });
});
