import { describe, expect, it } from 'vitest';
import { routeTemplate } from './metrics.js';

describe('routeTemplate', () => {
  it('joins the group mount path and the route path, never the raw URL', () => {
    expect(routeTemplate('/v1/projects', '/:projectId/change-requests', '/x')).toBe('/v1/projects/:projectId/change-requests');
    expect(routeTemplate('/v1/projects', '/', '/x')).toBe('/v1/projects');
    expect(routeTemplate(undefined, '/healthz', '/x')).toBe('/healthz');
    expect(routeTemplate('/v1/projects', undefined, 'unmatched')).toBe('/v1/projects/*');
    expect(routeTemplate(undefined, undefined, 'unmatched')).toBe('unmatched');
  });
});
