// Git smart HTTP over a project's mirror, for the API's git gateway (docs/git-gateway.md):
// upload-pack and receive-pack driven with --stateless-rpc. A push is received in full first
// (push-quarantine.ts, no lock held), then checked and relayed to the host by a pre-receive hook
// running inside receive-pack under the mirror's lock: the session's branch (fast-forward only,
// never deleted) and its checkpoint ref (rewrites allowed), relayed with the project's
// credentials and a lease on the value the pusher saw; the hook's words (and the host's refusal)
// reach the pusher as git's `remote:` lines, and the mirror's refs move only when the host accepted.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { spawnGit, runGit } from './exec.js';
import { redact } from './redact.js';
import type { Mirror } from './mirror.js';
import { MAX_PUSH_COMMANDS, type ReceivedPush } from './push-quarantine.js';

export type GitService = 'git-upload-pack' | 'git-receive-pack';
export const GIT_SERVICES: readonly GitService[] = ['git-upload-pack', 'git-receive-pack'];

/**
 * The mirror's service refs (refs/svc/*: keep refs, other sessions' checkpoints) are never shown
 * to or written by a client, except the caller's own refs given in `exposed` (its checkpoint ref).
 */
function hideRefs(exposed: readonly string[]): string[] {
  for (const ref of exposed) if (!/^refs\/svc\/[A-Za-z0-9._/-]+$/.test(ref)) throw new Error(`not a service ref: ${ref}`);
  return ['-c', 'transfer.hideRefs=refs/svc', ...exposed.flatMap((ref) => ['-c', `transfer.hideRefs=!${ref}`])];
}
const SERVICE_TIMEOUT_MS = 10 * 60_000;
const ZERO_SHA = '0'.repeat(40);

/** `Git-Protocol` header values git sends (`version=2`, `version=2:object-format=sha1`); anything else is dropped. */
export function gitProtocolEnv(header: string | undefined): Record<string, string> {
  return header && /^[A-Za-z0-9=:._-]{1,200}$/.test(header) ? { GIT_PROTOCOL: header } : {};
}

/** One pkt-line: its length in bytes (four hex digits, the header included), then the text. */
export function pktLine(text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}
const FLUSH = Buffer.from('0000');

/** An `ERR` packet: git prints `fatal: remote error: <message>`. */
function errorPacket(message: string): Buffer {
  return pktLine(`ERR ${message.replace(/\s+/g, ' ').slice(0, 900)}\n`);
}

/** What `GET info/refs` of protocol v0 starts with: `# service=...`, a flush. */
function servicePreamble(service: GitService): Buffer {
  return Buffer.concat([pktLine(`# service=${service}\n`), FLUSH]);
}

/** A `GET info/refs` answer that is an error: git prints `fatal: remote error: <message>`. */
export function advertisementError(service: GitService, message: string): Buffer {
  return Buffer.concat([servicePreamble(service), errorPacket(message)]);
}

/**
 * The body of `GET info/refs?service=...` (the `# service=` preamble is not sent for protocol v2).
 * `exposed`: service refs the caller may see (its checkpoint ref).
 */
export async function advertiseRefs(mirror: Mirror, service: GitService, gitProtocol: string | undefined, exposed: readonly string[] = []): Promise<Buffer> {
  const env = gitProtocolEnv(gitProtocol);
  const command = service.slice('git-'.length);
  const { stdout } = await runGit([...hideRefs(exposed), command, '--stateless-rpc', '--advertise-refs', mirror.dir], { env, timeoutMs: 60_000 });
  if (service === 'git-upload-pack' && env.GIT_PROTOCOL?.includes('version=2')) return stdout;
  return Buffer.concat([servicePreamble(service), stdout]);
}

/** Points the mirror's HEAD at the default branch, so a clone checks it out. */
export async function setMirrorHead(mirror: Mirror, defaultBranch: string): Promise<void> {
  // read first: every clone and fetch asks, and it seldom changes (a git process each time otherwise)
  const current = await readFile(path.join(mirror.dir, 'HEAD'), 'utf8').catch(() => '');
  if (current.trim() === `ref: refs/heads/${defaultBranch}`) return;
  await runGit(['symbolic-ref', 'HEAD', `refs/heads/${defaultBranch}`], { gitDir: mirror.dir, timeoutMs: 30_000 });
}

function exited(child: ReturnType<typeof spawnGit>, secrets: readonly string[] = []): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => { if (stderr.length < 8192) stderr += chunk.slice(0, 8192 - stderr.length); });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr: redact(stderr, secrets) })));
}

/** A fetch's request (wants and haves, never a pack) is small: git http-backend's own bound (GIT_HTTP_MAX_REQUEST_BUFFER). */
const MAX_UPLOAD_REQUEST_BYTES = 10 * 1024 * 1024;

/**
 * `git upload-pack --stateless-rpc`: the request body in, the response out. Only objects the
 * caller can see are served: hiding a ref keeps it out of the advertisement, but protocol v2 lets
 * a client want any object by its id ("wants can be anything"), e.g. another session's checkpoint
 * whose sha the REST API shows. So every `want` must be reachable from a visible ref (a branch,
 * the caller's own service refs), else the request is answered with an ERR packet.
 */
export async function serveUploadPack(mirror: Mirror, input: Readable, output: Writable, gitProtocol: string | undefined, exposed: readonly string[] = []): Promise<void> {
  let request: Buffer | null;
  try {
    request = await readRequest(input, MAX_UPLOAD_REQUEST_BYTES);
  } catch (error) {
    // the body could not be read (a gzip body past its bound, a client gone): said, if anyone listens
    output.end(errorPacket(`svc: the request was not read: ${(error as Error).message}`));
    return;
  }
  const wants = request && wantedObjects(request);
  const refusal = !wants ? 'svc: not a git upload-pack request (pkt-lines, at most 10 MiB)' : await unreachableWant(mirror, wants, exposed);
  if (refusal) {
    output.end(errorPacket(refusal));
    return;
  }
  const child = spawnGit([...hideRefs(exposed), '-c', 'uploadpack.allowRefInWant=false', 'upload-pack', '--stateless-rpc', mirror.dir], { env: gitProtocolEnv(gitProtocol), timeoutMs: SERVICE_TIMEOUT_MS });
  const done = exited(child);
  child.stdin.end(request);
  child.stdout.pipe(output);
  const { code, stderr } = await done;
  if (code !== 0) throw new Error(`upload-pack exited ${code}: ${stderr.trim().slice(0, 500)}`);
}

/** The whole body, or null beyond `maxBytes`. */
async function readRequest(input: Readable, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      input.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The object ids an upload-pack request wants (`want <oid>` lines of protocol v0 and v2); null
 * when the body is not a sequence of pkt-lines or a want line is malformed.
 */
export function wantedObjects(body: Buffer): string[] | null {
  const wants: string[] = [];
  for (let at = 0; at < body.length;) {
    const header = body.toString('latin1', at, at + 4);
    if (!/^[0-9a-f]{4}$/i.test(header)) return null;
    const size = Number.parseInt(header, 16);
    if (size < 4) { // flush, delim, response-end
      at += 4;
      continue;
    }
    if (at + size > body.length) return null;
    const line = body.toString('latin1', at + 4, at + size);
    if (line.startsWith('want ')) {
      const oid = /^want ([0-9a-f]{40}|[0-9a-f]{64})(?:[ \n\0]|$)/.exec(line)?.[1];
      if (!oid) return null;
      wants.push(oid);
    }
    at += size;
  }
  return wants;
}

/** Why a want is refused (not reachable from the refs the caller sees), or null when all are visible. */
async function unreachableWant(mirror: Mirror, wants: readonly string[], exposed: readonly string[]): Promise<string | null> {
  if (!wants.length) return null;
  const { stdout } = await runGit(['for-each-ref', '--format=%(objectname)', 'refs/heads/', ...exposed], { gitDir: mirror.dir, timeoutMs: 60_000 });
  const tips = new Set(stdout.toString('utf8').split('\n').filter(Boolean));
  const others = [...new Set(wants)].filter((oid) => !tips.has(oid));
  if (!others.length) return null;
  // a commit below a visible tip (an older one, a tip that moved on since the client looked) is fine
  const walk = await runGit(['rev-list', '--max-count=1', '--stdin'], {
    gitDir: mirror.dir, timeoutMs: 60_000, okExitCodes: [0, 128], input: [...others, ...[...tips].map((tip) => `^${tip}`)].join('\n') + '\n',
  });
  if (walk.exitCode === 0 && walk.stdout.length === 0) return null;
  return `svc: this session may fetch only the project's branches and its own checkpoint; ${others.length === 1 ? `${others[0]} is` : `${others.join(', ')} are`} not among them`;
}

// The hook reads the session's two refs and the host from its environment; nothing secret is
// in it. It runs with GIT_DIR = the mirror and the pushed objects in receive-pack's quarantine,
// which `git merge-base` and `git push` read; GIT_QUARANTINE_PATH is dropped so that a host on a
// local path accepts the relay. Every line is checked before anything is relayed: one refused
// ref refuses the whole push.
const PRE_RECEIVE = `#!/bin/sh
# svc git gateway: pre-receive of a project mirror (written by src/git/gateway.ts)
zero=${ZERO_SHA}
branch=\${SVC_GATEWAY_REF#refs/heads/}
refused=0
updates=
is_commit() { [ "$(git cat-file -t "$1" 2>/dev/null)" = commit ]; }
count=0
while read -r old new ref; do
  # the gateway refuses longer command lists before this runs; never read thousands one by one here
  count=$((count + 1))
  if [ "$count" -gt ${MAX_PUSH_COMMANDS} ]; then
    echo "svc: refusing the push: it names more than ${MAX_PUSH_COMMANDS} refs." >&2
    exit 1
  fi
  if [ "$ref" = "$SVC_GATEWAY_REF" ]; then
    if [ "$new" = "$zero" ]; then
      echo "svc: refusing to delete the session branch $branch: a session branch is never deleted or rewritten (SPEC §1: no rewriting, no force-push)." >&2
      refused=1
    elif ! is_commit "$new"; then
      echo "svc: refusing to update $ref: only commits can be pushed to the session branch." >&2
      refused=1
    elif [ "$old" != "$zero" ] && ! git merge-base --is-ancestor "$old" "$new" 2>/dev/null; then
      echo "svc: refusing to rewrite the session branch $branch: the push is not a fast-forward of its tip $old (SPEC §1: no rewriting, no force-push)." >&2
      echo "svc: keep the pushed commits and add new ones instead: git fetch origin, then git merge origin/$branch (or git revert), then git push origin HEAD." >&2
      refused=1
    else
      updates="$updates $old:$new:$ref"
    fi
  elif [ -n "$SVC_GATEWAY_CHECKPOINT_REF" ] && [ "$ref" = "$SVC_GATEWAY_CHECKPOINT_REF" ]; then
    if [ "$new" != "$zero" ] && ! is_commit "$new"; then
      echo "svc: refusing to update $ref: a checkpoint is a commit." >&2
      refused=1
    else
      updates="$updates $old:$new:$ref"
    fi
  else
    case "$ref" in
      refs/svc/*) echo "svc: refusing to update $ref: under refs/svc/ a session may write only its own checkpoint ref $SVC_GATEWAY_CHECKPOINT_REF." >&2 ;;
      *) echo "svc: refusing to update $ref: this session may push only its own branch $branch (git push origin HEAD)." >&2 ;;
    esac
    refused=1
  fi
done
if [ "$refused" = 1 ]; then
  echo "svc: work reaches other branches only through a change request: push your branch, then run svc cr open --title <text>." >&2
  exit 1
fi
# A commit the pusher cannot see (on no branch, nor its own checkpoint) must be one this push
# brings, new to the mirror: naming one the mirror has, e.g. another session's checkpoint whose sha
# the REST API shows, would make it readable through the pusher's own refs. (A pack may carry an
# object the mirror has, or a delta on it, so "in the push" alone does not prove the pusher knew it.)
news=
for update in $updates; do
  rest=\${update#*:}
  new=\${rest%%:*}
  [ "$new" = "$zero" ] || news="$news $new"
done
if [ -n "$news" ]; then
  if ! unseen=$( { printf '%s\n' $news; git for-each-ref --format='^%(objectname)' refs/heads/ $SVC_GATEWAY_CHECKPOINT_REF; } | git rev-list --stdin); then
    echo "svc: refusing the push: its commits cannot be read." >&2
    exit 1
  fi
  if [ -n "$unseen" ]; then
    store="$(git rev-parse --absolute-git-dir)/objects"
    known=$(printf '%s\n' "$unseen" | GIT_OBJECT_DIRECTORY="$store" GIT_ALTERNATE_OBJECT_DIRECTORIES= git cat-file --batch-check='%(objectname)' | grep -v ' missing$' | head -n 1)
    if [ -n "$known" ]; then
      echo "svc: refusing the push: it names commit $known, which is on no branch nor this session's checkpoint; push your own commits." >&2
      exit 1
    fi
  fi
fi
for update in $updates; do
  old=\${update%%:*}
  rest=\${update#*:}
  new=\${rest%%:*}
  ref=\${rest#*:}
  expect=$old
  [ "$expect" = "$zero" ] && expect=
  source=$new
  [ "$source" = "$zero" ] && source=
  out=$(env -u GIT_QUARANTINE_PATH git push --porcelain --no-verify "--force-with-lease=$ref:$expect" "$SVC_GATEWAY_REMOTE" "$source:$ref" 2>&1)
  status=$?
  if [ $status -ne 0 ]; then
    if printf '%s\\n' "$out" | grep -q 'stale info'; then
      echo "svc: $ref moved on the repository host since you fetched it: git fetch origin, integrate, and push again." >&2
    elif printf '%s\\n' "$out" | grep -q '^!'; then
      echo "svc: the repository host refused the push of $ref:" >&2
      printf '%s\\n' "$out" | sed -n -e 's/^remote: \\{0,1\\}\\(..*\\)$/  \\1/p' -e 's/^!	[^	]*	\\(.*\\)$/  \\1/p' >&2
    else
      # no verdict on the ref: the host was not reached, or the connection was cut (git's words say
      # which, and svc-agent waits such a failure out); the host URL is not shown
      echo "svc: the push of $ref did not reach the repository host:" >&2
      printf '%s\\n' "$out" | awk 'BEGIN { url = ENVIRON["SVC_GATEWAY_REMOTE"] }
        /^(fatal|error|remote):/ {
          sub(/^(fatal|error|remote): */, "")
          while (url != "" && (i = index($0, url)) > 0) $0 = substr($0, 1, i - 1) "the repository host" substr($0, i + length(url))
          if ($0 != "") print "  " $0
        }' >&2
    fi
    exit 1
  fi
done
`;

/** Writes the gateway's hooks directory below `root` (idempotent, atomic); returns its path. */
export async function ensureGatewayHooks(root: string): Promise<string> {
  const dir = path.join(root, '.svc-gateway-hooks');
  await mkdir(dir, { recursive: true });
  const staging = path.join(dir, `.pre-receive-${process.pid}-${Date.now()}`);
  await writeFile(staging, PRE_RECEIVE, { mode: 0o755 });
  await chmod(staging, 0o755);
  await rename(staging, path.join(dir, 'pre-receive'));
  return dir;
}

export interface ReceivePackOptions {
  /** The session's branch `refs/heads/<session id>`: fast-forwards only, never deleted. */
  allowedRef: string;
  /** The session's checkpoint ref `refs/svc/checkpoints/<session id>`: any update, deletion included. */
  checkpointRef?: string;
  /** From ensureGatewayHooks. */
  hooksDir: string;
}

/**
 * `git receive-pack --stateless-rpc` into the mirror, under its lock, with the gateway hook, fed
 * from a push received in full beforehand (receivePush: the lock is never held while a client
 * sends): refs other than the session's are refused, an accepted update is relayed to the host first.
 */
export async function serveReceivePack(mirror: Mirror, push: ReceivedPush, output: Writable, options: ReceivePackOptions): Promise<void> {
  if (!/^refs\/heads\/[A-Za-z0-9._/-]+$/.test(options.allowedRef)) throw new Error(`not a branch ref: ${options.allowedRef}`);
  const exposed = options.checkpointRef ? [options.checkpointRef] : [];
  await mirror.withHostInvocation((host) => mirror.exclusive(async () => {
    const child = spawnGit([
      ...host.configArgs, ...hideRefs(exposed),
      '-c', `core.hooksPath=${options.hooksDir}`,
      '-c', 'receive.denyDeletes=false',
      '-c', 'receive.denyNonFastForwards=false',
      '-c', 'receive.fsckObjects=true',
      'receive-pack', '--stateless-rpc', mirror.dir,
    ], {
      env: { ...host.env, SVC_GATEWAY_REF: options.allowedRef, SVC_GATEWAY_CHECKPOINT_REF: options.checkpointRef ?? '', SVC_GATEWAY_REMOTE: host.url },
      timeoutMs: SERVICE_TIMEOUT_MS,
    });
    const done = exited(child, host.secrets);
    const input = push.open();
    input.on('error', () => child.stdin.destroy());
    child.stdin.on('error', () => undefined); // receive-pack may stop reading early (a refused push)
    input.pipe(child.stdin);
    child.stdout.pipe(output);
    const { code, stderr } = await done;
    if (code !== 0) throw new Error(`receive-pack exited ${code}: ${stderr.trim().slice(0, 500)}`);
  }));
  mirror.invalidate();
}
