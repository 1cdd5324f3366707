// A real smart-HTTP git server on loopback for tests: a node http server that runs
// `git http-backend` as a CGI program over the repositories below `root`.
//
//   const server = await startGitHttpServer({ root, auth: { username: 'x', password: 'y' } });
//   git clone `${server.url}/repo.git` ...   // fetch and push (receive-pack is enabled)
//   server.requests  // every request: { method, path, user } (user null when unauthenticated)
//   await server.close();
//
// With `auth`, every request needs that Basic credential (401 with a challenge otherwise), so a
// git client must get it from a credential helper. `auth` may also be a function, to rotate it.
// `cut` cuts the connection of the requests it picks (a host that goes away in the middle).
import http from 'node:http';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';

export interface GitHttpCredential { username: string; password: string }

export interface GitHttpServerOptions {
  /** folder holding the repositories (served as `${url}/<name>`) */
  root: string;
  /** required Basic credential; a function is asked on each request */
  auth?: GitHttpCredential | ((username: string, password: string) => boolean);
  /** asked on each request: true cuts its connection before any answer (a host that goes away mid-push) */
  cut?: (method: string, path: string) => boolean;
}

export interface GitHttpServer {
  /** http://127.0.0.1:<port> */
  url: string;
  requests: Array<{ method: string; path: string; user: string | null }>;
  close(): Promise<void>;
}

function basicUser(header: string | undefined): GitHttpCredential | null {
  if (!header?.startsWith('Basic ')) return null;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Relays a request to the git server at `url`: a proxy in front of it (a door a test opens, shuts or breaks). */
export function relayTo(url: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const upstream = http.request(`${url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
}

export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const requests: GitHttpServer['requests'] = [];
  const accepts = (c: GitHttpCredential | null): boolean => {
    if (!options.auth) return true;
    if (!c) return false;
    return typeof options.auth === 'function'
      ? options.auth(c.username, c.password)
      : c.username === options.auth.username && c.password === options.auth.password;
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const credential = basicUser(req.headers.authorization);
    requests.push({ method: req.method ?? 'GET', path: url.pathname, user: credential && accepts(credential) ? credential.username : null });
    if (options.cut?.(req.method ?? 'GET', url.pathname)) { req.socket.destroy(); return; }
    if (!accepts(credential)) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    const cgi = spawn('git', ['-c', 'http.receivepack=true', 'http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: options.root,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: credential?.username ?? 'anonymous',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    req.pipe(cgi.stdin);
    // CGI output: headers (Status: among them), a blank line, then the body, streamed as it comes
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      const endLf = head.indexOf('\n\n');
      const at = end >= 0 ? end : endLf;
      if (at < 0) return;
      const sepLength = end >= 0 ? 4 : 2;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, at).toString('latin1').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      headersDone = true;
      const rest = head.subarray(at + sepLength);
      if (rest.length) res.write(rest);
    });
    cgi.on('close', () => {
      if (!headersDone) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
