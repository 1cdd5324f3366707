// The server's words of a non-2xx answer, as the dashboard shows them (the event stream's
// "disconnected (...)" said only "answered 409" before).
import { describe, expect, it } from 'vitest';
import { httpError } from './api.js';

describe('httpError', () => {
  it("takes the JSON answer's error", async () => {
    const error = await httpError(new Response(JSON.stringify({ error: 'session s1 is being stopped; send it a prompt (svc sessions prompt) to wake it' }), { status: 409 }));
    expect(error).toMatchObject({ status: 409, message: 'session s1 is being stopped; send it a prompt (svc sessions prompt) to wake it' });
  });

  it('an answer that is not JSON: its start; an empty one: the status', async () => {
    expect((await httpError(new Response('<html>bad gateway</html>', { status: 502 }))).message).toBe('<html>bad gateway</html>');
    expect((await httpError(new Response(null, { status: 503 }))).message).toBe('request failed with status 503');
    expect((await httpError(new Response('x'.repeat(2_000), { status: 500 }))).message).toHaveLength(500);
  });
});
