// The dashboard in the real Chromium (playwright-core) against `svc dev` with a real git host:
// sign in, projects, a change request's diff, merge (the host's main moves), a conflict, a
// manifest-invalid head, a read-only token, and untrusted text rendered as text. One browser,
// one page, reused across the steps; screenshots of the main pages go to docs/dashboard/ under
// `make screenshots` (a temporary directory otherwise: `make test` leaves the tree clean).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { mintToken } from '../../src/api/tokens.js';
import { git, seededHost, type HostRepo, type WorkClone } from '../git/fixtures.js';
import { launchBrowser, screenshotDir, type Browser } from '../helpers/browser.js';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { manifestWithTriggers, runOk, waitFor } from '../dev/util.js';

/** Untrusted text as an agent could write it: a title, a description, a diff line. */
const XSS = `<script>window.__xss=1</script> "><img src=x onerror="window.__xss=2">`;
const SHOTS = screenshotDir();
/** expect.poll gives up after 1 s by default; a busy machine needs longer. */
const POLL = { timeout: 15_000 };
/** The feature branch also fixes the manifest main starts with (its invalid trigger entry fails the merge gate). */
const VALID_MANIFEST = 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\ntriggers:\n  - slug: nightly\n    type: cron\n    cron: "0 0 3 * * *"\n    prompt: Review\n';

let dev: DevInstance;
let host: HostRepo;
let work: WorkClone;
let browser: Browser;
let page: Page;
let base: string;
let projectId: string;
let reader: string;
/** Every alert/confirm the page opened (dismissed); untrusted text must never open one. */
const dialogs: string[] = [];
const crs: Record<string, { id: string; number: number }> = {};
const heads: Record<string, string> = {};

async function api<T = Record<string, unknown>>(method: string, urlPath: string, body?: unknown, token = dev.token): Promise<{ status: number; body: T }> {
  const res = await fetch(dev.apiUrl + urlPath, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T };
}

const shot = (name: string) => page.screenshot({ path: path.join(SHOTS.dir, `${name}.png`), fullPage: true });
const crUrl = (name: string) => `${base}#/projects/${projectId}/change-requests/${crs[name]!.id}`;
const button = (name: string) => page.getByRole('button', { name, exact: true });

async function signIn(token: string) {
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

beforeAll(async () => {
  ({ host, work } = seededHost());
  work.write('svc.yaml', manifestWithTriggers()).commit('manifest');
  work.push('main');
  heads.feature = work.branch('feature', { 'README.md': `# demo: ${XSS}\n`, 'svc.yaml': VALID_MANIFEST, 'data/big.txt': Array.from({ length: 600 }, (_, i) => `row ${i}\n`).join('') }, { from: 'main' });
  heads.conflict = work.branch('conflict', { 'README.md': '# demo, in conflict\n' }, { from: 'main' });
  heads.badManifest = work.branch('bad-manifest', { 'svc.yaml': 'svc_version: 2\ndefault_agent: nobody\nagents:\n  coder: {}\n' }, { from: 'feature' });

  [dev, browser] = await Promise.all([startDev(), launchBrowser()]);
  base = dev.apiUrl.replace(/\/v1$/, '/');
  page = await browser.context.newPage();
  page.setDefaultTimeout(15_000); // fail with playwright's message, before the test's timeout
  page.on('dialog', (dialog) => { dialogs.push(dialog.message()); void dialog.dismiss(); });

  const created = await api<{ project: { id: string } }>('POST', '/projects', { name: 'web', repo_url: host.hostDir });
  expect(created.status).toBe(201);
  projectId = created.body.project.id;
  await waitFor('the project to read its default branch', async () => Boolean((await api<{ project: { default_branch_sha: string | null } }>('GET', `/projects/${projectId}`)).body.project.default_branch_sha));
  for (const [name, head, title] of [['feature', 'feature', `Fix ${XSS}`], ['conflict', 'conflict', 'Retitle the README'], ['badManifest', 'bad-manifest', 'Point the default agent elsewhere']] as const) {
    const cr = await api<{ change_request: { cr_id: string; number: number } }>('POST', `/projects/${projectId}/change-requests`, { title, head_ref: head, description: name === 'feature' ? `Description ${XSS}` : '' });
    expect(cr.status, JSON.stringify(cr.body)).toBe(201);
    crs[name] = { id: cr.body.change_request.cr_id, number: cr.body.change_request.number };
  }
  // the page shows what the listing says; wait until the listing has the project's status
  await waitFor('the project listing to carry the manifest and tip', async () => {
    const [listed] = (await api<{ projects: { manifest: unknown; default_branch_sha: string | null }[] }>('GET', '/projects')).body.projects;
    return Boolean(listed?.manifest && listed.default_branch_sha);
  });
  const minted = mintToken({ userId: randomUUID(), access: 'read', capabilities: [] }, 'default');
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(minted.secret));
  reader = minted.token;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  if (dev) removeDevDir(dev.dataDir);
  host?.cleanup();
  SHOTS.cleanup();
});

describe('dashboard in Chromium', () => {
  it('svc dev prints the dashboard URL with the token; svc dashboard prints the same URL', async () => {
    expect(dev.output()).toContain(`dashboard:  ${base}  (sign in with the admin token: ${dev.token})`);
    const printed = JSON.parse(await runOk(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'dashboard', '--no-open', '--json'], dev.env));
    expect(printed).toEqual({ url: base, opened: false });
  });

  it('a wrong token says so; the admin token signs in and lists the project', async () => {
    await page.goto(base);
    await page.fill('#token', 'svc_not-a-real-token');
    await page.click('button[type=submit]');
    await expect.poll(() => page.locator('[role=alert]').textContent(), POLL).toContain('That token was not accepted');
    await shot('sign-in');
    await signIn(dev.token);
    const row = page.locator('tr', { has: page.getByRole('link', { name: 'web', exact: true }) });
    await expect.poll(() => row.textContent(), POLL).toContain('valid');
    expect(await row.textContent()).toContain(host.hostDir);
    await expect.poll(() => row.locator('td').nth(5).textContent(), POLL).toBe('3'); // open CRs
    await shot('projects');
  });

  it('the project page shows its invalid trigger entry as a readable line', async () => {
    await page.getByRole('link', { name: 'web', exact: true }).click();
    await page.getByRole('heading', { name: 'Trigger errors' }).waitFor();
    const errors = page.locator('section', { has: page.getByRole('heading', { name: 'Trigger errors' }) }).locator('li');
    expect(await errors.allTextContents()).toEqual([expect.stringMatching(/^triggers\[2\] \(Broken\): .*must match/)]);
    await shot('project');
  });

  it('lists open change requests and shows a CR with its diff per file, large files collapsed', async () => {
    await page.getByRole('link', { name: 'Change requests' }).click();
    await page.getByRole('link', { name: `Fix ${XSS}` }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(3);
    expect(await page.locator('.filter a[aria-current=page]').textContent()).toBe('open');
    await shot('change-requests');
    await page.getByRole('link', { name: `Fix ${XSS}` }).click();
    await page.locator('.file').first().waitFor();
    expect(await page.locator('.preview').textContent()).toContain('Can merge: the base fast-forwards to the head.');
    // no session opened this CR: requesting changes tells no agent, and the form says so
    expect(await page.locator('label[for=feedback]').textContent()).toBe('Request changes (kept on this change request: no session opened it, so no agent is told)');
    const readme = page.locator('.file', { has: page.locator('.path', { hasText: 'README.md' }) });
    expect(await readme.locator('.counts').textContent()).toBe('+1 −1');
    expect(await readme.locator('.l-add .code').textContent()).toBe(`+# demo: ${XSS}`);
    expect(await readme.locator('.l-del .code').textContent()).toBe('-# demo');
    const big = page.locator('.file', { has: page.locator('.path', { hasText: 'data/big.txt' }) });
    expect(await big.locator('.line').count()).toBe(0);
    await big.getByRole('button', { name: /^Show \d+ lines$/ }).click();
    expect(await big.locator('.line.l-add').count()).toBe(600);
    await big.getByRole('button', { name: 'Collapse data/big.txt' }).click(); // collapse again for the screenshot
    await shot('change-request');
  });

  it('renders a title, a description and a diff line holding markup as text', async () => {
    expect(await page.locator('h1').textContent()).toBe(`#${crs.feature!.number} Fix ${XSS}`);
    expect(await page.locator('.description').textContent()).toBe(`Description ${XSS}`);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(dialogs).toEqual([]);
  });

  it('fits a narrow window without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.locator('.file').first().waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await shot('change-request-narrow');
    } finally {
      await page.setViewportSize({ width: 1200, height: 900 });
    }
  });

  it('merges with a message: the host main moves to the head', async () => {
    expect(host.tip('main')).not.toBe(heads.feature);
    await page.fill('#merge-message', 'ignored for a fast-forward');
    await button('Merge').click();
    await page.locator('.status', { hasText: 'merged' }).first().waitFor();
    expect(host.tip('main')).toBe(heads.feature);
    expect(await button('Merge').count()).toBe(0);
  });

  it('a CR in conflict lists the files and offers no merge', async () => {
    await page.goto(crUrl('conflict'));
    await page.locator('.preview').waitFor();
    expect(await page.locator('.preview').textContent()).toContain('conflicts that must be resolved');
    expect(await page.locator('.preview .files li').allTextContents()).toEqual(['README.md']);
    expect(await button('Merge').count()).toBe(0);
  });

  it('a manifest-invalid head shows the issues and nothing is merged', async () => {
    const before = host.tip('main');
    await page.goto(crUrl('badManifest'));
    // the preview already says what the gate will answer, never "Can merge"
    await expect.poll(() => page.locator('.preview > p').first().textContent(), POLL)
      .toBe('The merge gate will refuse this change request: the manifest on bad-manifest has 1 issue. Fix it on the branch, then merge.');
    expect(await page.locator('.preview .issues li').allTextContents()).toEqual([expect.stringMatching(/^\/default_agent: must name a key of agents/)]);
    await button('Merge').click();
    const alert = page.locator('[role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('(MANIFEST_INVALID)');
    expect(await alert.locator('.issues li').allTextContents()).toContainEqual(expect.stringMatching(/^\/default_agent: must name a key of agents/));
    expect(host.tip('main')).toBe(before);
  });

  it('a project whose default branch has no manifest says so on the list and on its page', async () => {
    const bare = seededHost();
    try {
      const created = await api<{ project: { id: string } }>('POST', '/projects', { name: 'bare', repo_url: bare.host.hostDir });
      expect(created.status).toBe(201);
      // the page shows what the listing says; wait until the listing has the project's status
      await waitFor('the project listing to carry its manifest', async () => Boolean((await api<{ projects: { name: string; manifest: unknown }[] }>('GET', '/projects')).body.projects.find((p) => p.name === 'bare')?.manifest));
      await page.goto(base);
      const row = page.locator('tr', { has: page.getByRole('link', { name: 'bare', exact: true }) });
      await expect.poll(() => row.locator('td').nth(3).textContent(), POLL).toBe('no manifest');
      await page.getByRole('link', { name: 'bare', exact: true }).click();
      const manifest = page.locator('dt', { hasText: 'Manifest' }).locator('xpath=following-sibling::dd[1]');
      await expect.poll(() => manifest.textContent(), POLL).toBe('none on the default branch');
    } finally {
      await runOk('kubectl', ['delete', 'project', 'bare', '--ignore-not-found'], dev.env);
      bare.host.cleanup();
    }
  });

  it('a link with the project name or a CR number (as the CLI takes them) turns into the id link, the rest kept', async () => {
    await page.goto(`${base}#/projects/web/change-requests?status=all`);
    await expect.poll(() => page.url(), POLL).toBe(`${base}#/projects/${projectId}/change-requests?status=all`);
    await page.getByRole('link', { name: `Fix ${XSS}` }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(3);
    expect(await page.locator('.filter a[aria-current=page]').textContent()).toBe('all');
    await page.goto(`${base}#/projects/nothing-here/sessions`);
    await expect.poll(() => page.locator('[role=alert]').textContent(), POLL).toContain('there is no project named "nothing-here"');
    // both at once: the name, then the number (`svc cr show 2`)
    await page.goto(`${base}#/projects/web/change-requests/${crs.conflict!.number}`);
    await expect.poll(() => page.url(), POLL).toBe(crUrl('conflict'));
    await page.getByRole('heading', { name: 'Retitle the README' }).waitFor();
    await page.goto(`${base}#/projects/${projectId}/change-requests/99`);
    await expect.poll(() => page.locator('[role=alert]').textContent(), POLL).toContain('there is no change request #99 in this project');
  });

  it('a CR whose head branch was deleted on the host says why it has no preview, and offers no merge (it showed nothing)', async () => {
    work.branch('doomed', { 'doomed.txt': 'soon gone\n' }, { from: 'main' });
    const cr = await api<{ change_request: { cr_id: string } }>('POST', `/projects/${projectId}/change-requests`, { title: 'Doomed', head_ref: 'doomed' });
    expect(cr.status, JSON.stringify(cr.body)).toBe(201);
    git(host.hostDir, 'update-ref', '-d', 'refs/heads/doomed');
    await page.goto(`${base}#/projects/${projectId}/change-requests/${cr.body.change_request.cr_id}`);
    await expect.poll(() => page.locator('.preview').textContent(), POLL)
      .toBe('No merge preview: the head branch doomed does not exist in the repository (any more): push it again, or close the change request');
    expect(await button('Merge').count()).toBe(0);
    // (a list of all change requests counts it from here on)
    await button('Close').click();
    await page.locator('.status', { hasText: 'closed' }).first().waitFor();
  });

  it('signing out forgets the token; a read-only token sees no buttons and a crafted merge is refused', async () => {
    await button('Sign out').click();
    await page.locator('#token').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await signIn(reader);
    expect(await page.locator('.who').textContent()).toBe('read only');
    await page.goto(crUrl('badManifest'));
    await page.locator('.preview').waitFor();
    for (const name of ['Merge', 'Close', 'Edit title and description', 'Request changes']) expect(await button(name).count(), name).toBe(0);
    // what a person could paste into the console: the same call with the tab's token
    const crafted = await page.evaluate(`fetch('v1/projects/${projectId}/change-requests/${crs.badManifest!.id}/merge', {
      method: 'POST', headers: { authorization: 'Bearer ' + sessionStorage.getItem('svc.token'), 'content-type': 'application/json' }, body: '{}',
    }).then(async (res) => ({ status: res.status, body: await res.json() }))`) as { status: number; body: { error: string } };
    expect(crafted.status).toBe(403);
    expect(crafted.body.error).toContain('read access only');
    expect((await api<{ change_request: { status: string } }>('GET', `/projects/${projectId}/change-requests/${crs.badManifest!.id}`)).body.change_request.status).toBe('open');
  });

  it('a token that expires while in use signs the tab out, and the sign-in page says why', async () => {
    await button('Sign out').click();
    const expiresAt = new Date(Date.now() + 4_000).toISOString();
    const minted = mintToken({ userId: randomUUID(), access: 'read', capabilities: [], name: 'brief', expiresAt }, 'default');
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(minted.secret));
    await signIn(minted.token);
    await waitFor('the token to expire', async () => (await api('GET', '/projects', undefined, minted.token)).status === 401);
    await page.getByRole('link', { name: 'Projects', exact: true }).click();
    await page.locator('#token').waitFor();
    expect(await page.locator('[role=alert]').textContent()).toBe(`Signed out: the API no longer accepts the token (token brief expired at ${expiresAt}: a cluster admin makes a new one with \`svc tokens create\`).`);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });
});
