// Git smart HTTP over a project's mirror, for the API's git gateway (docs/git-gateway.md):
// upload-pack and receive-pack driven with --stateless-rpc. A push is checked and relayed to the
// host by a pre-receive hook running inside receive-pack: only the one allowed branch, relayed
// with the project's credentials and a lease on the value the pusher saw; the hook's words (and
// the host's refusal) reach the pusher as git's `remote:` lines, and the mirror's ref moves only
// when the host accepted.
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { spawnGit, runGit } from './exec.js';
import { redact } from './redact.js';
import type { Mirror } from './mirror.js';

export type GitService = 'git-upload-pack' | 'git-receive-pack';
export const GIT_SERVICES: readonly GitService[] = ['git-upload-pack', 'git-receive-pack'];

/** Service refs of the mirror (refs/svc/keep/*) are never shown to or written by a client. */
const HIDE_REFS = ['-c', 'transfer.hideRefs=refs/svc'];
const SERVICE_TIMEOUT_MS = 10 * 60_000;
const ZERO_SHA = '0'.repeat(40);

/** `Git-Protocol` header values git sends (`version=2`, `version=2:object-format=sha1`); anything else is dropped. */
export function gitProtocolEnv(header: string | undefined): Record<string, string> {
  return header && /^[A-Za-z0-9=:._-]{1,200}$/.test(header) ? { GIT_PROTOCOL: header } : {};
}

function pktLine(text: string): Buffer {
  return Buffer.from((text.length + 4).toString(16).padStart(4, '0') + text, 'utf8');
}
const FLUSH = Buffer.from('0000');

/** An `ERR` packet: git prints `fatal: remote error: <message>`. */
export function errorPacket(message: string): Buffer {
  return pktLine(`ERR ${message.replace(/\s+/g, ' ').slice(0, 900)}\n`);
}

/** The body of `GET info/refs?service=...` (the `# service=` preamble is not sent for protocol v2). */
export async function advertiseRefs(mirror: Mirror, service: GitService, gitProtocol: string | undefined): Promise<Buffer> {
  const env = gitProtocolEnv(gitProtocol);
  const command = service.slice('git-'.length);
  const { stdout } = await runGit([...HIDE_REFS, command, '--stateless-rpc', '--advertise-refs', mirror.dir], { env, timeoutMs: 60_000 });
  if (service === 'git-upload-pack' && env.GIT_PROTOCOL?.includes('version=2')) return stdout;
  return Buffer.concat([pktLine(`# service=${service}\n`), FLUSH, stdout]);
}

/** Points the mirror's HEAD at the default branch, so a clone checks it out. */
export async function setMirrorHead(mirror: Mirror, defaultBranch: string): Promise<void> {
  await runGit(['symbolic-ref', 'HEAD', `refs/heads/${defaultBranch}`], { gitDir: mirror.dir, timeoutMs: 30_000 });
}

function exited(child: ReturnType<typeof spawnGit>, secrets: readonly string[] = []): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => { if (stderr.length < 8192) stderr += chunk; });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr: redact(stderr, secrets) })));
}

/** `git upload-pack --stateless-rpc`: the request body in, the response out. */
export async function serveUploadPack(mirror: Mirror, input: Readable, output: Writable, gitProtocol: string | undefined): Promise<void> {
  const child = spawnGit([...HIDE_REFS, 'upload-pack', '--stateless-rpc', mirror.dir], { env: gitProtocolEnv(gitProtocol), timeoutMs: SERVICE_TIMEOUT_MS });
  const done = exited(child);
  input.pipe(child.stdin);
  child.stdout.pipe(output);
  const { code, stderr } = await done;
  if (code !== 0) throw new Error(`upload-pack exited ${code}: ${stderr.trim().slice(0, 500)}`);
}

// The hook reads the allowed ref and the host from its environment; nothing secret is in it.
// It runs with GIT_DIR = the mirror and the pushed objects in the quarantine, which `git push`
// reads; GIT_QUARANTINE_PATH is dropped so that a host on a local path accepts the relay.
const PRE_RECEIVE = `#!/bin/sh
# svc git gateway: pre-receive of a project mirror (written by src/git/gateway.ts)
zero=${ZERO_SHA}
branch=\${SVC_GATEWAY_REF#refs/heads/}
refused=0
new_sha=
while read -r old new ref; do
  if [ "$ref" != "$SVC_GATEWAY_REF" ]; then
    echo "svc: refusing to update $ref: this session may push only its own branch $branch (git push origin HEAD)." >&2
    refused=1
  elif [ "$new" = "$zero" ]; then
    echo "svc: refusing to delete the session branch $branch." >&2
    refused=1
  else
    old_sha=$old
    new_sha=$new
  fi
done
if [ "$refused" = 1 ]; then
  echo "svc: work reaches other branches only through a change request: push your branch, then run svc cr open --title <text>." >&2
  exit 1
fi
[ -n "$new_sha" ] || exit 0
expect=$old_sha
[ "$expect" = "$zero" ] && expect=
out=$(env -u GIT_QUARANTINE_PATH git push --porcelain --no-verify "--force-with-lease=$SVC_GATEWAY_REF:$expect" "$SVC_GATEWAY_REMOTE" "$new_sha:$SVC_GATEWAY_REF" 2>&1)
status=$?
if [ $status -ne 0 ]; then
  if printf '%s\\n' "$out" | grep -q 'stale info'; then
    echo "svc: the branch $branch moved on the repository host since you fetched it: git fetch origin, integrate, and push again." >&2
  else
    echo "svc: the repository host refused the push:" >&2
    printf '%s\\n' "$out" | sed -n -e 's/^remote: \\{0,1\\}\\(..*\\)$/  \\1/p' -e 's/^!	[^	]*	\\(.*\\)$/  \\1/p' >&2
  fi
  exit 1
fi
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
  /** The only ref the pusher may update: `refs/heads/<session id>`. */
  allowedRef: string;
  /** From ensureGatewayHooks. */
  hooksDir: string;
}

/**
 * `git receive-pack --stateless-rpc` into the mirror, under its lock, with the gateway hook:
 * refs other than `allowedRef` are refused, an accepted update is relayed to the host first.
 */
export async function serveReceivePack(mirror: Mirror, input: Readable, output: Writable, options: ReceivePackOptions): Promise<void> {
  if (!/^refs\/heads\/[A-Za-z0-9._/-]+$/.test(options.allowedRef)) throw new Error(`not a branch ref: ${options.allowedRef}`);
  await mirror.withHostInvocation((host) => mirror.exclusive(async () => {
    const child = spawnGit([
      ...host.configArgs, ...HIDE_REFS,
      '-c', `core.hooksPath=${options.hooksDir}`,
      '-c', 'receive.denyDeletes=false',
      '-c', 'receive.fsckObjects=true',
      'receive-pack', '--stateless-rpc', mirror.dir,
    ], {
      env: { ...host.env, SVC_GATEWAY_REF: options.allowedRef, SVC_GATEWAY_REMOTE: host.url },
      timeoutMs: SERVICE_TIMEOUT_MS,
    });
    const done = exited(child, host.secrets);
    input.pipe(child.stdin);
    child.stdout.pipe(output);
    const { code, stderr } = await done;
    if (code !== 0) throw new Error(`receive-pack exited ${code}: ${stderr.trim().slice(0, 500)}`);
  }));
  mirror.invalidate();
}
