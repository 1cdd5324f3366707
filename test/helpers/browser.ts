// Debian's Chromium driven by playwright-core, headless, with a fresh profile per launch and
// nothing that phones home (the browser tests and bench/dashboard share it).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export interface Browser { context: BrowserContext; close(): Promise<void> }

/** A persistent context on a new temporary user-data-dir, removed on close. */
export async function launchBrowser(viewport = { width: 1200, height: 900 }): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Where the browser tests put their screenshots: SVC_SCREENSHOT_DIR when set (`make screenshots`
 * sets docs/dashboard/, whose tracked images the docs show), else a temporary directory, so
 * `make test` never rewrites tracked files. Taking them still renders every page in full.
 */
export function screenshotDir(): { dir: string; cleanup(): void } {
  const wanted = process.env.SVC_SCREENSHOT_DIR?.trim();
  if (wanted) return { dir: path.resolve(wanted), cleanup() {} };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-screenshots-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
