// The dashboard's static files (web/, built into dist/web by `make build`), served at `/`.
// Hashed assets are cached for a year; index.html is revalidated on every load. Every response
// of this group carries a strict Content-Security-Policy: scripts and styles only from this
// origin, no inline code, no framing (docs/dashboard.md).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type RequestHandler } from 'express';
import type { RouteGroup } from '../groups.js';

export interface DashboardOptions {
  /** The build output: index.html and assets/. */
  dir: string;
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset { type: string; identity: Buffer; br?: Buffer; gzip?: Buffer }

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
  });
  next();
};

/** Reads every built asset once (a few tens of KB) with the .br/.gz variants the build wrote. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const assetDir = path.join(dir, 'assets');
  if (!existsSync(assetDir)) return assets;
  const names = readdirSync(assetDir);
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const variant = (ext: string) => (names.includes(name + ext) ? readFileSync(path.join(assetDir, name + ext)) : undefined);
    assets.set(name, { type, identity: readFileSync(path.join(assetDir, name)), br: variant('.br'), gzip: variant('.gz') });
  }
  return assets;
}

/** The best encoding the client accepts among those built (q=0 excluded). */
function pickEncoding(header: string | undefined, asset: Asset): 'br' | 'gzip' | null {
  const accepted = new Set((header ?? '').split(',').map((part) => part.trim()).filter((part) => !/;\s*q=0(\.0*)?$/.test(part)).map((part) => part.split(';')[0]!.trim()));
  if (asset.br && accepted.has('br')) return 'br';
  if (asset.gzip && accepted.has('gzip')) return 'gzip';
  return null;
}

export function dashboardRoutes(options: DashboardOptions): Router {
  const index = readFileSync(path.join(options.dir, 'index.html'));
  const assets = loadAssets(options.dir);
  const router = Router();
  router.get(['/', '/index.html'], securityHeaders, (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(index);
  });

  router.get('/assets/:name', securityHeaders, (req, res, next) => {
    const asset = assets.get(String(req.params.name));
    if (!asset) return next();
    const encoding = pickEncoding(req.get('accept-encoding'), asset);
    res.set({ 'Cache-Control': 'public, max-age=31536000, immutable', 'Content-Type': asset.type, Vary: 'Accept-Encoding' });
    if (encoding) res.set('Content-Encoding', encoding);
    res.send(encoding === 'br' ? asset.br : encoding === 'gzip' ? asset.gzip : asset.identity);
  });

  return router;
}

/** Mounted at the root, after the /v1 groups (mountGroups orders by depth); no auth: the page is public, the data is not. */
export function dashboardGroup(options: DashboardOptions): RouteGroup {
  return { path: '/', auth: 'none', body: 'none', router: dashboardRoutes(options) };
}
