import { describe, expect, it } from 'vitest';
import { apiMetrics, countBy, forgetLlmProject, llmMetrics, metricsText, operatorMetrics, trackQueueDepth } from './metrics.js';

describe('metrics', () => {
  it('counts objects by labels', () => {
    expect(countBy([{ s: 'a' }, { s: 'b' }, { s: 'a' }], (x) => ({ status: x.s }))).toEqual([
      { labels: { status: 'a' }, value: 2 }, { labels: { status: 'b' }, value: 1 },
    ]);
  });

  it('reads sourced gauges and queue depths at scrape time, in the exposition format', async () => {
    const m = operatorMetrics();
    m.sessions.setSource(() => [{ labels: { status: 'running' }, value: 3 }]);
    trackQueueDepth('session', () => 7);
    // a route of this test's own: the registry is the process's, other tests count requests too
    apiMetrics().requests.inc({ method: 'GET', route: '/v1/metrics-test', status: '200' });
    const first = await metricsText();
    expect(first.contentType).toContain('text/plain');
    let body = first.body;
    expect(body).toContain('svc_sessions{status="running"} 3');
    expect(body).toContain('svc_workqueue_depth{controller="session"} 7');
    expect(body).toContain('svc_http_requests_total{method="GET",route="/v1/metrics-test",status="200"} 1');
    m.sessions.setSource(undefined);
    trackQueueDepth('session', undefined);
    ({ body } = await metricsText());
    expect(body).not.toContain('svc_sessions{');
    expect(body).not.toContain('svc_workqueue_depth{controller="session"}');
  });

  it('forgets every model gateway series of a deleted project, and only those', async () => {
    const m = llmMetrics();
    for (const project of ['gone', 'kept']) {
      m.tokens.inc({ project, provider: 'p', model: 'm', direction: 'input' }, 5);
      m.requests.inc({ project, provider: 'p', status: '200' });
      m.duration.observe({ project, provider: 'p' }, 0.2);
      m.firstByte.observe({ project, provider: 'p' }, 0.1);
    }
    await forgetLlmProject('gone');
    const { body } = await metricsText();
    expect(body).not.toContain('project="gone"');
    for (const name of ['svc_llm_tokens_total', 'svc_llm_requests_total', 'svc_llm_request_duration_seconds_count', 'svc_llm_time_to_first_byte_seconds_bucket']) {
      expect(body).toMatch(new RegExp(`${name}\\{[^}]*project="kept"`));
    }
  });
});
