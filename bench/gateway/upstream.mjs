// The bench's model: an OpenAI-style streaming chat completion (a role chunk, CHUNKS content
// chunks, a finish chunk; the usage chunk and `usage: null` only when asked, as OpenAI does),
// answered at once. Its own process, so the load generator and the gateway do not share its CPU.
// Usage: node bench/gateway/upstream.mjs  (prints "listening <port>")
import http from 'node:http';

const CHUNKS = Number(process.env.UPSTREAM_CHUNKS ?? 16);
const created = Math.floor(Date.now() / 1000);

const server = http.createServer((req, res) => {
  const body = [];
  req.on('data', (c) => body.push(c));
  req.on('end', () => {
    let request;
    try { request = JSON.parse(Buffer.concat(body).toString('utf8')); } catch { request = {}; }
    const asked = request.stream_options?.include_usage === true;
    const chunk = (choices, usage) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'bench-1', choices, ...(asked ? { usage: usage ?? null } : {}) })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    let text = '';
    for (let i = 0; i < CHUNKS; i++) text += chunk([{ index: 0, delta: { content: `token ${i} ` }, finish_reason: null }]);
    text += chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    if (asked) text += chunk([], { prompt_tokens: 40, completion_tokens: CHUNKS, total_tokens: 40 + CHUNKS });
    res.end(`${text}data: [DONE]\n\n`);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
