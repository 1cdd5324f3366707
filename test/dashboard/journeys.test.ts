// The dashboard's secrets and sessions pages in the real Chromium against `svc dev` running
// sandboxes with the fixture engine: set a secret and never see its value again (the reserved
// prefix refused with the server's message, delete confirmed first); start a session with a
// prompt holding markup (rendered as text), follow it to running and its engine events, send a
// prompt, abort the run, stop it; a running session's page following what its engine reports (the
// initial prompt refused then taken, a model call retried then aborted, the change requests it
// opened and no other) without a reload; fire a
// trigger now and follow the link to its session; the model usage page (totals, per day, session,
// trigger, model; the budget; providers without keys) and a session's tokens on its page. One
// browser and one page for the file; screenshots go to docs/dashboard/ under `make screenshots` (a
// temporary directory otherwise: `make test` leaves the tree clean).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { buildArtifacts } from '../daemon/harness.js';
import { launchBrowser, screenshotDir, type Browser } from '../helpers/browser.js';
import { removeDevDir, fixtureEngineArgs, startDev, type DevInstance } from '../helpers/dev.js';
import { commitFiles, makeRepo, waitFor } from '../dev/util.js';
import { startModelServer } from '../fixtures/model-server.js';

const XSS = `<script>window.__xss=1</script> "><img src=x onerror="window.__xss=2">`;
const SECRET_VALUE = 'hunter2-never-shown';
const MANIFEST = `svc_version: 2
default_agent: coder
agents:
  coder: {}
triggers:
  - slug: nightly
    type: cron
    cron: "0 0 3 * * *"
    timezone: Europe/Berlin
    prompt: "Nightly review: {{ message.text }}"
  - slug: on-push
    type: webhook
    secret_env: HOOK_SECRET
    prompt: "A push to {{ payload.ref }}"
  - slug: Broken
    type: cron
    prompt: no schedule and an uppercase slug
`;

let dev: DevInstance;
let browser: Browser;
let page: Page;
let base: string;
let projectId: string;
const dialogs: string[] = [];

const SHOTS = screenshotDir();
const shot = (name: string) => page.screenshot({ path: path.join(SHOTS.dir, `${name}.png`), fullPage: true });
const button = (name: string) => page.getByRole('button', { name, exact: true });
const projectUrl = (section: string) => `${base}#/projects/${projectId}/${section}`;

async function api<T = Record<string, unknown>>(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(dev.apiUrl + urlPath, {
    method,
    headers: { authorization: `Bearer ${dev.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

async function sessionStatus(id: string): Promise<string> {
  return (await api<{ session: { status: string } }>('GET', `/projects/${projectId}/sessions/${id}`)).body.session.status;
}

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  [dev, browser] = await Promise.all([
    startDev({ args: fixtureEngineArgs(fixtureEngine) }),
    launchBrowser(),
  ]);
  base = dev.apiUrl.replace(/\/v1$/, '/');
  const repo = path.join(dev.dataDir, 'repo');
  makeRepo(repo, { 'svc.yaml': MANIFEST, 'README.md': '# journeys\n' });
  const created = await api<{ project: { id: string } }>('POST', '/projects', { name: 'journeys', repo_url: repo });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  projectId = created.body.project.id;
  await waitFor('the project to list its triggers', async () => (await api<{ project: { triggers: unknown[] } }>('GET', `/projects/${projectId}`)).body.project.triggers.length === 2);

  page = await browser.context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    // the only dialog the dashboard opens is the confirmation before deleting a secret
    void (dialog.type() === 'confirm' && dialog.message().startsWith('Delete the secret') ? dialog.accept() : dialog.dismiss());
  });
  await page.goto(base);
  await page.fill('#token', dev.token);
  await page.click('button[type=submit]');
  await button('Sign out').waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  if (dev) removeDevDir(dev.dataDir);
  SHOTS.cleanup();
});

describe('dashboard journeys in Chromium', () => {
  it('sets a secret and never shows its value; the reserved prefix is refused with the server message; delete asks first', async () => {
    await page.goto(projectUrl('secrets'));
    await page.fill('#secret-name', 'HOOK_SECRET');
    await page.fill('#secret-value', SECRET_VALUE);
    await button('Set').click();
    await page.getByRole('status').filter({ hasText: 'Saved HOOK_SECRET.' }).waitFor();
    await page.locator('td code', { hasText: 'HOOK_SECRET' }).waitFor();
    expect(await page.inputValue('#secret-value')).toBe('');
    await page.reload();
    await page.locator('td code', { hasText: 'HOOK_SECRET' }).waitFor();
    expect(await page.content()).not.toContain(SECRET_VALUE);
    expect(JSON.stringify((await api('GET', `/projects/${projectId}/secrets`)).body)).not.toContain(SECRET_VALUE);

    await page.fill('#secret-name', 'SVC_TOKEN');
    await page.fill('#secret-value', 'x');
    await button('Set').click();
    expect(await page.locator('[role=alert]').textContent()).toContain('reserved');

    await page.fill('#secret-name', 'TEMPORARY');
    await page.fill('#secret-value', 'y');
    await button('Set').click();
    await page.locator('td code', { hasText: 'TEMPORARY' }).waitFor();
    await page.getByRole('button', { name: 'Delete TEMPORARY' }).click();
    await page.locator('td code', { hasText: 'TEMPORARY' }).waitFor({ state: 'detached' });
    expect(dialogs).toEqual(['Delete the secret TEMPORARY? Sandboxes started afterwards will not have it.']);
    await shot('secrets');
  });

  it('starts a session with a prompt holding markup, follows it to running, sends a prompt, aborts the run and stops it', async () => {
    await page.goto(projectUrl('sessions'));
    await page.getByText('Start a session').click();
    await page.fill('#session-prompt', `Please ${XSS}`);
    await button('Start').click();
    await page.waitForURL(/#\/projects\/[^/]+\/sessions\/[0-9a-f-]{36}$/);
    const sessionId = page.url().split('/').pop()!;
    await page.locator('.status', { hasText: 'running' }).waitFor({ timeout: 45_000 });
    expect(await page.locator('.prompt').textContent()).toBe(`Please ${XSS}`);
    // how it started, phase by phase (issue 24 §2)
    const start = page.getByRole('region', { name: 'Start' });
    for (const phase of ['branch pushed', 'credentials written', 'sandbox scheduled', 'daemon up', 'repository cloned', 'engine ready']) {
      expect(await start.getByRole('row', { name: new RegExp(`^${phase} `) }).count(), phase).toBe(1);
    }
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    await expect.poll(() => page.locator('section[aria-label="Engine events"] h2').textContent(), { timeout: 15_000 }).toContain('live');

    await page.fill('#session-followup', `And then ${XSS}`);
    await button('Send').click();
    await page.getByRole('status').filter({ hasText: 'Sent.' }).waitFor();
    await expect.poll(() => page.locator('section[aria-label="Engine events"] h2').textContent(), { timeout: 15_000 }).toContain('engine busy');
    // the engine's stream, readable: the prompt, the assistant's text, the shell command; markup as text
    const events = page.locator('.events');
    await events.locator('.event-assistant').first().waitFor();
    expect(await events.locator('.event-user').textContent()).toBe(`Prompt: And then ${XSS}`);
    expect(await events.locator('.event-assistant').textContent()).toBe(`fixture received: And then ${XSS}`);
    expect(await events.locator('.event-tool pre').first().textContent()).toBe('$ git status --short');
    expect(await page.locator('main img').count()).toBe(0);
    await shot('session');

    // abort the run: the engine goes idle, the session keeps running
    await button('Abort run').click();
    await expect.poll(() => page.locator('section[aria-label="Engine events"] h2').textContent(), { timeout: 15_000 }).toContain('engine idle');
    expect(await sessionStatus(sessionId)).toBe('running');

    await button('Stop').click();
    await page.locator('.status', { hasText: 'stopped' }).waitFor({ timeout: 30_000 });
    expect(await sessionStatus(sessionId)).toBe('stopped');
    expect(await button('Stop').count()).toBe(0);

    await page.goto(projectUrl('sessions'));
    await page.locator('tbody tr', { hasText: sessionId.slice(0, 8) }).waitFor();
    await shot('sessions');
    expect(dialogs.filter((d) => !d.startsWith('Delete the secret'))).toEqual([]); // markup opened no alert
  });

  it('a running session\'s page follows its engine without a reload: the initial prompt refused, then taken; a model call retried, then aborted', async () => {
    // the fixture engine refuses the prompt 4 times (svc-agent asks again after 1, 2, 4 and 8 s),
    // then takes it and retries a failing model call until the run is aborted
    const started = await api<{ session: { id: string } }>('POST', `/projects/${projectId}/sessions`, { prompt: '#fixture {"refuse":4,"retry":"the model is down"}' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const sessionId = started.body.session.id;
    await page.goto(projectUrl(`sessions/${sessionId}`));
    await page.locator('.status', { hasText: 'running' }).waitFor({ timeout: 45_000 });
    const progress = page.locator('.progress-error');
    const model = page.locator('.model-error');
    await progress.waitFor({ timeout: 15_000 });
    expect(await progress.textContent()).toBe('the initial prompt was not delivered: engine refused the initial prompt (500); svc-agent tries again');
    // all of it on the same page, read again while the session runs (the failure shows what REST said)
    await model.waitFor({ timeout: 30_000 }).catch(async (error: Error) => { throw new Error(`${error.message}\nREST: ${JSON.stringify((await api('GET', `/projects/${projectId}/sessions/${sessionId}`)).body)}`); });
    expect(await model.textContent()).toMatch(/^cannot reach the model: the model is down \(attempt \d+\)$/);
    await expect.poll(() => progress.count(), { timeout: 15_000 }).toBe(0);
    await button('Abort run').click();
    await expect.poll(() => model.count(), { timeout: 15_000 }).toBe(0);
    expect(await sessionStatus(sessionId)).toBe('running');

    // the change requests this session opened appear on its page while it runs, and no other
    const repo = path.join(dev.dataDir, 'repo');
    for (const branch of ['from-the-session', 'from-elsewhere']) {
      execFileSync('git', ['checkout', '-q', '-b', branch, 'main'], { cwd: repo });
      commitFiles(repo, { [`${branch}.txt`]: `${branch}\n` }, branch);
    }
    execFileSync('git', ['checkout', '-q', 'main'], { cwd: repo });
    const ours = await api<{ change_request: { number: number } }>('POST', `/projects/${projectId}/change-requests`, { title: 'Opened by the session', head_ref: 'from-the-session', session_id: sessionId });
    expect(ours.status, JSON.stringify(ours.body)).toBe(201);
    const other = await api<{ change_request: { number: number } }>('POST', `/projects/${projectId}/change-requests`, { title: 'Opened by someone else', head_ref: 'from-elsewhere' });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    await page.getByRole('link', { name: `#${ours.body.change_request.number} Opened by the session` }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole('link', { name: /Opened by someone else/ }).count()).toBe(0);
    await api('POST', `/projects/${projectId}/sessions/${sessionId}/stop`, {});
  }, 120_000);

  it('lists triggers with the webhook URL and invalid entries, fires one now and links to its session', async () => {
    await page.goto(projectUrl('triggers'));
    const nightly = page.getByRole('region', { name: 'Trigger nightly' });
    const onPush = page.getByRole('region', { name: 'Trigger on-push' });
    await nightly.waitFor();
    expect(await onPush.locator('dd code').first().textContent()).toBe(`${base}v1/webhooks/projects/${projectId}/on-push`);
    expect(await page.locator('.issues li').allTextContents()).toEqual([expect.stringMatching(/^triggers\[2\] \(Broken\): /)]);
    expect(await nightly.textContent()).toContain('(Europe/Berlin)');
    // a prompt tag that renders empty at every fire is said on its card ({{ message.text }} is a manual fire's)
    expect(await onPush.locator('.warning').allTextContents()).toEqual([expect.stringMatching(/^Prompt: \{\{ payload\.ref \}\} names no variable of a webhook fire and renders empty; it has .*body\.\*/)]);
    expect(await nightly.locator('.warning').count()).toBe(0);
    // its secret was set on the secrets page above; without it, the card says every delivery is refused
    expect(await onPush.textContent()).not.toContain('not set');
    expect((await api('DELETE', `/projects/${projectId}/secrets/HOOK_SECRET`)).status).toBe(204);
    await page.reload();
    await onPush.getByText('not set', { exact: true }).waitFor();
    expect(await onPush.textContent()).toContain('every delivery is refused (409)');
    expect(await onPush.getByRole('link', { name: 'Secrets' }).getAttribute('href')).toBe(`#/projects/${projectId}/secrets`);
    expect((await api('PUT', `/projects/${projectId}/secrets/HOOK_SECRET`, { value: SECRET_VALUE })).status).toBe(204);

    await nightly.getByRole('textbox').fill('from the dashboard');
    await nightly.getByRole('button', { name: 'Fire now' }).click();
    const link = nightly.getByRole('status').getByRole('link', { name: /^session [0-9a-f]{8}$/ });
    await link.waitFor();
    await shot('triggers');
    await link.click();
    await page.waitForURL(/#\/projects\/[^/]+\/sessions\/[0-9a-f-]{36}$/);
    const sessionId = page.url().split('/').pop()!;
    await page.locator('.prompt').waitFor({ timeout: 30_000 });
    expect(await page.locator('.prompt').textContent()).toBe('Nightly review: from the dashboard');
    expect(await page.locator('.facts').textContent()).toContain('nightly');
    await waitFor('the fired session to run', async () => (await sessionStatus(sessionId)) === 'running', 45_000);

    await page.goto(projectUrl('triggers'));
    await nightly.getByText('Recent fires', { exact: true }).click();
    await nightly.locator('.fires li', { hasText: 'manual' }).waitFor();
    expect(await nightly.locator('.fires li').first().textContent()).toContain(`session ${sessionId.slice(0, 8)}`);
    await api('POST', `/projects/${projectId}/sessions/${sessionId}/stop`, {});
  });

  it('the model usage page: totals, per day, session, trigger and model, the budget, providers without keys; the session shows its tokens', async () => {
    const model = await startModelServer();
    try {
      const KEY = 'sk-dashboard-never-shown';
      expect((await api('PUT', `/projects/${projectId}/gateway/providers/scripted`, { api_key: KEY, base_url: model.url })).status).toBe(204);
      expect((await api('PUT', `/projects/${projectId}/gateway/budget`, { period: 'day', max_tokens: 1000, max_tokens_per_session: null })).status).toBe(200);
      // a session the trigger starts spends 2 × 15 tokens through the gateway
      type Listed = { sessions: { id: string; trigger: string | null; status: string }[] };
      const before = new Set((await api<Listed>('GET', `/projects/${projectId}/sessions`)).body.sessions.map((s) => s.id));
      expect((await api('POST', `/projects/${projectId}/triggers/nightly/fire`, { message: { text: 'spend' } })).status).toBeLessThan(300);
      const sessionId = await waitFor('the fired session running', async () => {
        const { body } = await api<Listed>('GET', `/projects/${projectId}/sessions`);
        return body.sessions.find((s) => !before.has(s.id) && s.trigger === 'nightly' && s.status === 'running')?.id;
      }, 45_000);
      const env = (await api<Record<string, string>>('GET', `/projects/${projectId}/sessions/${sessionId}/engine/fixture/env`)).body;
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${env.SVC_LLM_BASE_URL}/scripted/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${env.SVC_LLM_API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm1', stream: i === 1, messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(res.status).toBe(200);
        await res.text();
      }
      await waitFor('the usage recorded', async () => (await api<{ total: { input_tokens: number } }>('GET', `/projects/${projectId}/gateway/usage?group_by=day`)).body.total.input_tokens >= 20);

      await page.goto(projectUrl('usage'));
      await page.getByRole('heading', { name: 'Model usage' }).waitFor();
      const totals = page.getByLabel('Totals');
      await totals.waitFor();
      expect(await totals.textContent()).toContain('30'); // 20 in + 10 out
      expect(await page.getByRole('region', { name: 'Per session' }).textContent()).toContain(sessionId.slice(0, 8));
      expect(await page.getByRole('region', { name: 'Per trigger' }).textContent()).toContain('nightly');
      expect(await page.getByRole('region', { name: 'Per model' }).textContent()).toContain('m1');
      expect(await page.getByRole('region', { name: 'Per day (UTC)' }).textContent()).toContain(new Date().toISOString().slice(0, 10));
      await page.getByRole('region', { name: 'Budget' }).getByText('1,000 tokens per day (UTC)').waitFor();
      expect(await page.getByRole('region', { name: 'Budget' }).textContent()).not.toContain('used up');
      await page.getByRole('region', { name: 'Providers' }).getByText('scripted').waitFor();
      await page.getByRole('region', { name: 'Latest requests' }).locator('tbody tr').nth(1).waitFor();
      expect(await page.content()).not.toContain(KEY);
      await shot('usage');

      // a limit below what was spent: how far past it (not capped at 100 %), and what it means
      expect((await api('PUT', `/projects/${projectId}/gateway/budget`, { period: 'day', max_tokens: 20, max_tokens_per_session: null })).status).toBe(200);
      await page.reload();
      await page.getByRole('region', { name: 'Budget' }).getByText('used up', { exact: true }).waitFor();
      expect(await page.getByRole('region', { name: 'Budget' }).textContent()).toContain('30 tokens this day (150%) used up: model requests get 429 until the next day (UTC) or a higher limit');

      await page.getByRole('region', { name: 'Per session' }).getByRole('link', { name: sessionId.slice(0, 8) }).click();
      await page.waitForURL(new RegExp(`/sessions/${sessionId}$`));
      await expect.poll(() => page.locator('.facts').textContent(), { timeout: 15_000 }).toMatch(/Model tokens\s*30 \(20 in, 10 out, 3 requests/); // and svc-agent's model listing
      await api('POST', `/projects/${projectId}/sessions/${sessionId}/stop`, {});
    } finally {
      await model.close();
    }
  });
});
