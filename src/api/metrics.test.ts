import express from 'express';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { metricsText } from '../lib/metrics.js';
import { httpMetrics, routeTemplate } from './metrics.js';

describe('routeTemplate', () => {
  it('joins the group mount path and the route path, never the raw URL', () => {
    expect(routeTemplate('/v1/projects', '/:projectId/change-requests')).toBe('/v1/projects/:projectId/change-requests');
    expect(routeTemplate('/v1/projects', '/')).toBe('/v1/projects');
    expect(routeTemplate(undefined, '/healthz')).toBe('/healthz');
    expect(routeTemplate('/v1/projects', undefined)).toBe('/v1/projects/*');
    expect(routeTemplate(undefined, undefined)).toBe('unmatched');
  });
});

describe('httpMetrics', () => {
  it('counts paths no route answers under one series, whoever sends them (a series per path grew without end)', async () => {
    const app = express();
    app.use(httpMetrics());
    app.get('/healthz', (_req, res) => { res.send('ok'); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const path of ['/healthz', '/wp-login.php', '/.env', '/a/b/c?x=1', '/v1/nothing']) await (await fetch(`${base}${path}`)).text();
      const lines = (await metricsText()).body.split('\n').filter((l) => l.startsWith('svc_http_requests_total{'));
      expect(lines.some((l) => l.includes('route="/healthz"'))).toBe(true);
      expect(lines.find((l) => l.includes('route="unmatched"') && l.includes('status="404"'))).toMatch(/ 4$/);
      for (const raw of ['wp-login', '.env', '/a/b/c']) expect(lines.join('\n')).not.toContain(raw);
    } finally {
      server.close();
    }
  });
});
