// Dashboard benchmark: bytes shipped for the first load (cache disabled, as the server encodes
// them for Chromium) and time to interactive of the change-request page with a 5,000-line diff
// in headless Chromium, next to the raw REST calls the page makes, timed in the same run.
// Needs `make build` (svc dev and dist/web). Run: npx tsx bench/dashboard/main.ts
import type { Page } from 'playwright-core';
import { seededHost } from '../../test/git/fixtures.js';
import { launchBrowser } from '../../test/helpers/browser.js';
import { removeDevDir, startDev } from '../../test/helpers/dev.js';
import { waitFor } from '../../test/dev/util.js';
import { median, percentile, writeSection } from '../lib/report.js';

const RUNS = 15;
const LINES = 5000;

const numbered = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix} line ${i + 1}: some changed text of a realistic width\n`).join('');

interface Sample { tti: number[]; api: number[]; diffOnly: number[] }

async function main(): Promise<void> {
  const { host, work } = seededHost();
  work.branch('one-file', { 'big.txt': numbered(LINES, 'big') }, { from: 'main' });
  const many: Record<string, string> = {};
  for (let f = 0; f < 25; f++) many[`src/file-${String(f).padStart(2, '0')}.txt`] = numbered(LINES / 25, `f${f}`);
  work.branch('many-files', many, { from: 'main' });

  const dev = await startDev();
  const browser = await launchBrowser();
  try {
    const call = async (method: string, urlPath: string, body?: unknown) => {
      const res = await fetch(dev.apiUrl + urlPath, { method, headers: { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
      if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const project = (await call('POST', '/projects', { name: 'bench', repo_url: host.hostDir })).project as { id: string };
    await waitFor('the project', async () => ((await call('GET', `/projects/${project.id}`)).project as { default_branch_sha: string | null }).default_branch_sha);
    const crOf = async (head: string) => ((await call('POST', `/projects/${project.id}/change-requests`, { title: `${LINES} lines: ${head}`, head_ref: head })).change_request as { cr_id: string }).cr_id;
    const cases = [
      { name: `one file of ${LINES} lines (collapsed at first)`, cr: await crOf('one-file'), expand: true },
      { name: `25 files of ${LINES / 25} lines (all shown)`, cr: await crOf('many-files'), expand: false },
    ];
    const base = dev.apiUrl.replace(/\/v1$/, '/');
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await page.addInitScript(`sessionStorage.setItem('svc.token', ${JSON.stringify(dev.token)})`);

    // First load: every byte on the wire (encoded) for the projects page, split shell / API.
    const urls = new Map<string, string>();
    const bytes = { shell: 0, api: 0, shellRaw: 0 };
    cdp.on('Network.responseReceived', (e) => { urls.set(e.requestId, e.response.url); });
    cdp.on('Network.dataReceived', (e) => { if (!urls.get(e.requestId)?.includes('/v1/')) bytes.shellRaw += e.dataLength; });
    cdp.on('Network.loadingFinished', (e) => {
      if (urls.get(e.requestId)?.includes('/v1/')) bytes.api += e.encodedDataLength;
      else bytes.shell += e.encodedDataLength;
    });
    await page.goto(base);
    await page.waitForSelector('table a');
    const firstLoad = { ...bytes };

    const rows: string[] = [];
    for (const c of cases) {
      const sample: Sample = { tti: [], api: [], diffOnly: [] };
      const crPath = `/projects/${project.id}/change-requests/${c.cr}`;
      for (let i = 0; i < RUNS; i++) {
        sample.tti.push(await timeToInteractive(page, `${base}#/projects/${project.id}/change-requests/${c.cr}`));
        // the same REST calls the page makes (CR, diff in parallel; then the preview), from Node
        let start = performance.now();
        await Promise.all([call('GET', crPath), call('GET', `${crPath}/diff`)]);
        await call('GET', `${crPath}/merge-preview`);
        sample.api.push(performance.now() - start);
        start = performance.now();
        await call('GET', `${crPath}/diff`);
        sample.diffOnly.push(performance.now() - start);
      }
      const diff = median(sample.diffOnly);
      const fmt = (v: number[]) => `${median(v).toFixed(0)} ms | ${percentile(v, 95).toFixed(0)} ms | ${(median(v) / diff).toFixed(1)}×`;
      rows.push(`| ${c.name}: CR page interactive (navigation → diff and merge button rendered) | ${fmt(sample.tti)} |`);
      rows.push(`| ${c.name}: the page's REST calls from Node (CR + diff, then preview) | ${fmt(sample.api)} |`);
      rows.push(`| ${c.name}: baseline: raw \`GET .../diff\` | ${fmt(sample.diffOnly)} |`);
      if (c.expand) {
        const expand: number[] = [];
        for (let i = 0; i < 5; i++) expand.push(await expandTime(page, `${base}#/projects/${project.id}/change-requests/${c.cr}`));
        rows.push(`| ${c.name}: click "Show ${LINES + 1} lines" → all rows rendered | ${median(expand).toFixed(0)} ms | ${percentile(expand, 95).toFixed(0)} ms | ${(median(expand) / diff).toFixed(1)}× |`);
      }
    }

    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    writeSection('dashboard', `## dashboard: first load and the change-request page

Headless Chromium (Debian's, through playwright-core) against \`svc dev\`, browser cache disabled,
${RUNS} runs per row. First load of the projects page: the shell (index.html, script, stylesheet,
brotli as the API serves it to Chromium) is ${kb(firstLoad.shell)} on the wire (${kb(firstLoad.shellRaw)} decoded;
target < 150 KB compressed), plus ${kb(firstLoad.api)} of API JSON.

Time to interactive = from navigation start (a cold load of the whole app, cache disabled) until
the diff's file sections and the merge button are in the DOM and laid out, read from
\`performance.now()\` in the page. The baseline is the raw \`GET .../diff\` from Node in the same run; the ratio column
divides by its median.

| measure | median | p95 | × raw diff GET |
|---|---|---|---|
${rows.join('\n')}

A file of more than 400 changed lines starts collapsed, so a single huge file costs little until
it is opened; the 25-file case renders all ${LINES} lines at once. Lines are rendered in blocks of
100 with \`content-visibility: auto\`, so only the blocks on screen are laid out and painted.`);
    process.stdout.write(`first load: shell ${kb(firstLoad.shell)} (${kb(firstLoad.shellRaw)} decoded), api ${kb(firstLoad.api)}\n${rows.join('\n')}\n`);
  } finally {
    await browser.close();
    await dev.stop();
    removeDevDir(dev.dataDir);
    host.cleanup();
  }
}

/** ms from navigation start until the CR page shows its files and the merge button. */
async function timeToInteractive(page: Page, url: string): Promise<number> {
  await page.goto('about:blank');
  await page.goto(url);
  await page.waitForSelector('.file', { timeout: 60_000 });
  await page.waitForSelector('button.primary');
  // browser-side code as a string (this file is type-checked without the DOM library); reading
  // offsetHeight forces the layout, so the time includes laying out every row
  return page.evaluate('document.body.offsetHeight, performance.now()');
}

/** ms from clicking "Show N lines" until every row of the file is rendered. */
async function expandTime(page: Page, url: string): Promise<number> {
  await page.goto('about:blank');
  await page.goto(url);
  await page.waitForSelector('.file button.secondary');
  return page.evaluate(`new Promise((resolve) => {
    const start = performance.now();
    document.querySelector('.file p.pad button').click();
    const check = () => (document.querySelectorAll('.file .line').length > ${LINES} ? resolve((document.body.offsetHeight, performance.now() - start)) : requestAnimationFrame(check));
    requestAnimationFrame(check);
  })`);
}

await main();
