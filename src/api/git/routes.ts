// The git gateway's routes (thin): `GET clone-credential` (bearer sandbox token) and git smart
// HTTP (`GET info/refs`, `POST git-upload-pack`, `POST git-receive-pack`; HTTP Basic with the
// clone credential). Mounted before the /v1 router: no bearer auth, no JSON parsing, raw bodies.
import { Router, type Request, type Response } from 'express';
import { createGunzip } from 'node:zlib';
import { Transform, type Readable } from 'node:stream';
import {
  advertiseRefs, advertisementError, ensureGatewayHooks, GitEngineError, PushTooLargeError, PushTooManyRefsError, receivePush, serveReceivePack, serveUploadPack,
  setMirrorHead, sweepPushQuarantine, GIT_SERVICES, type BasicCredentials, type GitService, type ReceivedPush,
} from '../../git/index.js';
import { KeyedMutex, KeyedSemaphore } from '../../lib/keyed-mutex.js';
import { checkpointRef, sessionBranchRef } from '../../lib/session-refs.js';
import { ApiError } from '../errors.js';
import { CredentialsUnavailableError } from '../change-requests/store.js';
import { Unauthenticated, type GatewayCaller, type GitGatewayService } from './service.js';

export interface GitRoutesConfig {
  /** Namespace (account) of the projects. */
  namespace: string;
}

const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;

/** Mounted under /v1/projects/:projectId/git with mergeParams. */
const projectIdOf = (req: Request) => String((req.params as Record<string, string>).projectId);

function basicCredential(header: string | undefined): BasicCredentials | null {
  const m = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** A 401 carries the challenge git needs before it asks its credential helper. */
async function authenticated<T>(res: Response, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof Unauthenticated) res.set('www-authenticate', `${error.scheme} realm="svc"`);
    throw error;
  }
}

/**
 * A gzip body may inflate to this many times what was sent, past the first MiB: git's own requests
 * (pkt-lines of object ids; receive-pack bodies are not gzipped) come nowhere near, and a body of
 * zeros inflated 1000 times over pinned a GiB of the API's memory for 1 MB sent.
 */
const MAX_INFLATION = { ratio: 100, freeBytes: 1024 * 1024 };

/** Passes what `gunzip` gives while it stays within MAX_INFLATION of the `sent()` bytes that went in. */
function inflationBound(sent: () => number): Transform {
  let inflated = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.length;
      if (inflated > MAX_INFLATION.freeBytes && inflated > MAX_INFLATION.ratio * sent()) {
        done(new Error(`the gzip body inflates more than ${MAX_INFLATION.ratio} times: send it uncompressed`));
      } else done(null, chunk);
    },
  });
}

function requestBody(req: Request): Readable {
  const encoding = (req.get('content-encoding') ?? '').toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') {
    const gunzip = createGunzip();
    let sent = 0;
    req.on('data', (chunk: Buffer) => { sent += chunk.length; });
    const bound = inflationBound(() => sent);
    // the client failing or going away mid-body ends the body too (pipe forwards neither)
    req.once('error', (error) => gunzip.destroy(error));
    req.once('close', () => { if (!req.complete) gunzip.destroy(new Error('the client went away')); });
    gunzip.once('error', (error) => bound.destroy(error));
    bound.once('error', () => { req.unpipe(gunzip); gunzip.destroy(); });
    return req.pipe(gunzip).pipe(bound);
  }
  if (encoding && encoding !== 'identity') throw new ApiError(415, `unsupported Content-Encoding ${encoding}`);
  return req;
}

function startGitResponse(res: Response, contentType: string): void {
  res.status(200).set({ 'content-type': contentType, 'cache-control': 'no-cache, max-age=0, must-revalidate', pragma: 'no-cache' });
}

/** The host could not be read: git shows an ERR packet as `remote error: ...`. */
function hostProblem(error: unknown): string | null {
  if (error instanceof GitEngineError || error instanceof CredentialsUnavailableError) {
    return `svc: the project repository cannot be reached: ${error.message}`;
  }
  return null;
}

export function gitRoutes(service: GitGatewayService, config: GitRoutesConfig): Router {
  const router = Router({ mergeParams: true });
  const hooks = ensureGatewayHooks(service.mirrorDir);
  hooks.catch(() => undefined); // reported by the first push that needs it
  void sweepPushQuarantine(service.mirrorDir); // what a killed process left

  // per session: fetches in flight (each holds its request), pushes being received (each on disk)
  const fetches = new KeyedSemaphore(4);
  const pushes = new KeyedMutex();

  const caller = (req: Request, res: Response): Promise<GatewayCaller> =>
    authenticated(res, () => service.authenticateGit(config.namespace, projectIdOf(req), basicCredential(req.get('authorization'))));

  router.get('/clone-credential', async (req, res) => {
    const bearer = BEARER.exec(req.get('authorization') ?? '')?.[1];
    const credential = await authenticated(res, () => service.cloneCredential(config.namespace, projectIdOf(req), bearer));
    res.set('cache-control', 'no-store').json(credential);
  });

  router.get('/info/refs', async (req, res) => {
    const name = req.query.service;
    if (!GIT_SERVICES.includes(name as GitService)) {
      throw new ApiError(400, 'only git smart HTTP is served: GET info/refs?service=git-upload-pack or git-receive-pack');
    }
    const gitService = name as GitService;
    const { project, sessionId } = await caller(req, res);
    let body: Buffer;
    try {
      // what a client sees (and pushes against) is the host's state now
      const mirror = await service.mirror(project);
      await mirror.fetch({ force: true });
      await setMirrorHead(mirror, project.spec.defaultBranch ?? 'main');
      body = await advertiseRefs(mirror, gitService, req.get('git-protocol'), [checkpointRef(sessionId)]);
    } catch (error) {
      const problem = hostProblem(error);
      if (!problem) throw error;
      body = advertisementError(gitService, problem);
    }
    startGitResponse(res, `application/x-${gitService}-advertisement`);
    res.end(body);
  });

  router.post('/git-upload-pack', async (req, res) => {
    const { project, sessionId } = await caller(req, res);
    const mirror = await service.mirror(project);
    // each holds its request (up to 10 MiB) while it runs: a session's others wait, unread
    await fetches.run(sessionId, async () => {
      const input = requestBody(req);
      startGitResponse(res, 'application/x-git-upload-pack-result');
      await serveUploadPack(mirror, input, res, req.get('git-protocol'), [checkpointRef(sessionId)]).catch(() => res.destroy());
    });
  });

  // The whole body is received (bounded, to a file of its own) before the mirror's lock is
  // taken: a client that stalls mid-push blocks no one else of the project.
  router.post('/git-receive-pack', async (req, res) => {
    const gatewayCaller = await caller(req, res);
    // one push of a session at a time is received (up to SVC_GIT_MAX_PUSH_BYTES on disk): the others wait, unread
    await pushes.run(gatewayCaller.sessionId, () => receiveAndServe(req, res, gatewayCaller));
  });

  async function receiveAndServe(req: Request, res: Response, gatewayCaller: GatewayCaller): Promise<void> {
    const { project, sessionId } = gatewayCaller;
    const limit = service.maxPushBytes;
    const tooLarge = () => {
      res.set('connection', 'close'); // the rest of the body is not read
      return new ApiError(413, new PushTooLargeError(limit).message);
    };
    const declared = Number(req.get('content-length'));
    if (Number.isFinite(declared) && declared > limit) throw tooLarge();
    const mirror = await service.mirror(project);
    const hooksDir = await hooks;
    let push: ReceivedPush;
    try {
      push = await receivePush(requestBody(req), service.mirrorDir, limit);
    } catch (error) {
      if (error instanceof PushTooLargeError) throw tooLarge();
      if (error instanceof PushTooManyRefsError) res.set('connection', 'close');
      throw new ApiError(400, `the push was not received: ${(error as Error).message}`);
    }
    let served = false;
    try {
      startGitResponse(res, 'application/x-git-receive-pack-result');
      served = await serveReceivePack(mirror, push, res, { allowedRef: sessionBranchRef(sessionId), checkpointRef: checkpointRef(sessionId), hooksDir }).then(() => true, () => { res.destroy(); return false; });
    } finally {
      await push.discard(); // at once: the received body is not kept while the checkpoint is noted
    }
    // after the answer: the Session learns of a new checkpoint (a stop's, too), never at the push's cost
    if (served) await service.noteCheckpoint(gatewayCaller, mirror).catch(() => undefined);
  }

  return router;
}
