// The processes the daemon-proxy benchmark runs next to svc-agent, and the CPU each one spends.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';

/** Starts a Node program (given as source) in a process of its own; it prints its port first. */
export async function startScript(source: string, ...args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', source, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, port: Number(chunk.toString().trim()) };
}

/** A trivial upstream: `200 ok`, and an SSE stream at /events. */
export const TRIVIAL_UPSTREAM = `
  const http = require('node:http');
  const server = http.createServer((req, res) => {
    if (req.url === '/events') { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.write('data: first\\n\\n'); return; }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }); res.end('ok');
  });
  server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

/**
 * The least a Node proxy does: node:http in, node:http out over a keep-alive agent, no
 * authentication, no header handling. What any Node reverse proxy costs on this machine.
 */
export const REFERENCE_PROXY = `
  const http = require('node:http');
  const target = Number(process.argv[1]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const up = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => { res.statusCode = 502; res.end(); });
    req.pipe(up);
  });
  server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

/** CPU seconds (user + system) a process has used so far; with `tree`, its descendants' too. */
export function cpuSeconds(pid: number, tree = false): number {
  let total = 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    total = (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch { /* gone */ }
  if (tree) for (const child of childrenOf(pid)) total += cpuSeconds(child, true);
  return total;
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch { /* gone */ }
  }
  return out;
}

/**
 * The engine process under the daemon and its password. The bench reads it from the engine's
 * environment (same user, Linux /proc) so direct requests pass the engine's own authentication.
 */
export function findEngine(daemonPid: number): { pid: number; password: string } {
  const queue = childrenOf(daemonPid);
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const entry = env.find((e) => e.startsWith('OPENCODE_SERVER_PASSWORD='));
    if (entry) return { pid, password: entry.slice(entry.indexOf('=') + 1) };
    queue.push(...childrenOf(pid));
  }
  throw new Error(`no engine process under the daemon (pid ${daemonPid})`);
}
