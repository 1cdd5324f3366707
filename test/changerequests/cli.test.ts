// `svc cr` and `svc projects link` as a user runs them: the built CLI (node bin/svc.js) against
// `svc dev`, a real git host and a clone, with the sandbox environment defaults of SPEC §4.6.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { git, seededHost, type HostRepo, type WorkClone } from '../git/fixtures.js';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';

let dev: DevInstance;
let host: HostRepo;
let work: WorkClone;
let projectId: string;

/** Runs the CLI in `cwd` with only the given environment (plus PATH and HOME). */
function svc(args: string[], env: Record<string, string | undefined>, cwd = work.dir) {
  const res = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), ...args], {
    cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}
const userEnv = () => ({ SVC_API_URL: dev.apiUrl, SVC_CLI_TOKEN: dev.token });

beforeAll(async () => {
  dev = await startDev();
  ({ host, work } = seededHost());
  const created = svc(['projects', 'create', 'crcli', '--repo', host.hostDir, '--json'], userEnv());
  expect(created.code, created.stderr).toBe(0);
  projectId = JSON.parse(created.stdout).id;
  work.branch('feature', { 'feature.txt': 'one\n' }, { from: 'main' });
  work.branch('other', { 'other.txt': 'two\n' }, { from: 'main' });
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  if (dev) removeDevDir(dev.dataDir);
  host?.cleanup();
});

describe('svc cr', () => {
  it('needs a project: --project, SVC_PROJECT_ID or a linked repository', () => {
    const res = svc(['cr', 'ls'], userEnv());
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/no project: pass --project, set SVC_PROJECT_ID, or run svc projects link/);
    expect(svc(['cr', 'ls', '--project', 'crcli'], userEnv()).code).toBe(0);
  });

  it('opens change requests from the sandbox environment (executor token, branch, session)', () => {
    const sandbox = {
      SVC_API_URL: dev.apiUrl, SVC_EXECUTOR_TOKEN: dev.token, SVC_PROJECT_ID: projectId,
      SVC_BRANCH_NAME: 'feature', SVC_SESSION_ID: randomUUID(),
    };
    const opened = svc(['cr', 'open', '--title', 'Add feature', '--description', 'adds feature.txt'], sandbox);
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toMatch(/^Opened CR #1: Add feature \(feature -> main, id [0-9a-f-]{36}\)/);

    const alias = svc(['cr', 'open', '--title', 'Add other', '--json'], { ...sandbox, SVC_BRANCH_NAME: undefined, SVC_HEAD_REF: 'other' });
    expect(alias.code, alias.stderr).toBe(0);
    const cr = JSON.parse(alias.stdout);
    // The session id is unknown to the service: dropped (SPEC §4.1 rule 5).
    expect(cr).toMatchObject({ number: 2, head_ref: 'other', base_ref: 'main', origin_session_id: null, status: 'open' });

    const noHead = svc(['cr', 'open', '--title', 'x'], { ...sandbox, SVC_BRANCH_NAME: undefined });
    expect(noHead.code).not.toBe(0);
    expect(noHead.stderr).toMatch(/no head branch: pass --head, or set SVC_BRANCH_NAME/);
    const notAhead = svc(['cr', 'open', '--title', 'x', '--head', 'main', '--base', 'feature'], sandbox);
    expect(notAhead.code).toBe(1);
    expect(notAhead.stderr).toMatch(/has no commit that feature does not have.*\(CR_HEAD_NOT_AHEAD\)/);
  });

  it('projects link stores the project in .git/config, where git does not commit it', () => {
    const linked = svc(['projects', 'link', 'crcli'], userEnv());
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stdout).toMatch(/Linked this repository to project crcli/);
    expect(git(work.dir, 'config', '--local', '--get', 'svc.project')).toBe(projectId);
    expect(git(work.dir, 'status', '--porcelain')).toBe('');
    expect(svc(['projects', 'link'], userEnv()).stdout.trim()).toBe(projectId);
    const unknown = svc(['projects', 'link', 'nope'], userEnv());
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no project named nope/);
  });

  it('a read right after a push shows the new head tip (svc dev refreshes open CRs on every read)', async () => {
    const list = await fetch(`${dev.apiUrl}/projects/${projectId}/change-requests?status=open`, { headers: { authorization: `Bearer ${dev.token}` } });
    const other = ((await list.json()) as { change_requests: { cr_id: string; head_ref: string }[] }).change_requests.find((c) => c.head_ref === 'other')!;
    work.checkout('other').write('later.txt', 'pushed after the CR was opened\n');
    const pushed = work.commit('later work');
    work.push('other');
    const read = await fetch(`${dev.apiUrl}/projects/${projectId}/change-requests/${other.cr_id}`, { headers: { authorization: `Bearer ${dev.token}` } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { change_request: { head_commit_sha: string } }).change_request.head_commit_sha).toBe(pushed);
  });

  it('ls, show and diff print tables, previews and patches (JSON on request)', () => {
    const ls = svc(['cr', 'ls'], userEnv());
    expect(ls.code, ls.stderr).toBe(0);
    const rows = ls.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^#\s+STATUS\s+TITLE\s+HEAD -> BASE\s+UPDATED$/);
    expect(rows[1]).toMatch(/^#2\s+open\s+Add other\s+other -> main/);
    expect(rows[2]).toMatch(/^#1\s+open\s+Add feature\s+feature -> main/);
    expect(JSON.parse(svc(['cr', 'ls', '--json'], userEnv()).stdout)).toHaveLength(2);
    expect(svc(['cr', 'ls', '--status', 'merged'], userEnv()).stdout.trim()).toBe('No merged change requests.');
    // by session: these two were opened in the name of no session the service knows
    expect(svc(['cr', 'ls', '--session', randomUUID()], userEnv()).stdout.trim()).toBe('No open change requests.');
    const badSession = svc(['cr', 'ls', '--session', 'nope'], userEnv());
    expect(badSession.code).toBe(1);
    expect(badSession.stderr).toMatch(/origin_session_id "nope" is not a UUID/);
    const badStatus = svc(['cr', 'ls', '--status', 'draft'], userEnv());
    expect(badStatus.code).toBe(1);
    expect(badStatus.stderr).toMatch(/status must be one of open, merged, closed, all/);

    const show = svc(['cr', 'show', '1'], userEnv());
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('CR #1: Add feature');
    expect(show.stdout).toContain(`feature (${host.tip('feature')!.slice(0, 12)}) -> main (${host.tip('main')!.slice(0, 12)})`);
    expect(show.stdout).toMatch(/Merge preview:\n {2}can fast-forward/);
    expect(show.stdout).toContain('adds feature.txt');
    const showJson = JSON.parse(svc(['cr', 'show', '#1', '--json'], userEnv()).stdout);
    expect(showJson.merge_preview).toMatchObject({ can_fast_forward: true, conflicts: [] });

    for (const args of [['cr', 'diff', '1'], ['cr', 'diff', '1', '--no-color']]) {
      const diff = svc(args, userEnv());
      expect(diff.code, diff.stderr).toBe(0);
      expect(diff.stdout).toContain('+++ b/feature.txt');
      expect(diff.stdout).toContain('+one');
      expect(diff.stdout).not.toContain('\x1b[');
    }
    const missing = svc(['cr', 'show', '99'], userEnv());
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/no change request #99/);
    expect(svc(['cr', 'show', 'three'], userEnv()).stderr).toMatch(/give its number \(3 or #3\) or its id/);
  });

  it('close, reopen and merge by number or id; server errors are printed and exit non-zero', () => {
    expect(svc(['cr', 'close', '2'], userEnv()).stdout).toMatch(/^Closed CR #2: Add other\./);
    const reopenTwice = svc(['cr', 'reopen', '#2'], userEnv());
    expect(reopenTwice.stdout).toMatch(/^Reopened CR #2/);
    const again = svc(['cr', 'reopen', '2'], userEnv());
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^svc: change request #2 is open, not closed/);

    const ff = svc(['cr', 'merge', '1'], userEnv());
    expect(ff.code, ff.stderr).toBe(0);
    expect(ff.stdout).toMatch(/^Merged CR #1 into main at [0-9a-f]{12} \(fast-forward\)\./);
    expect(host.tip('main')).toBe(host.tip('feature'));

    const id = JSON.parse(svc(['cr', 'show', '2', '--json'], userEnv()).stdout).change_request.cr_id;
    const threeWay = svc(['cr', 'merge', id, '--message', 'Ship other'], userEnv());
    expect(threeWay.code, threeWay.stderr).toBe(0);
    expect(threeWay.stdout).toMatch(/\(merge commit\)/);
    expect(git(host.hostDir, 'log', '-1', '--format=%s|%an <%ae>', 'main')).toBe('Ship other|svc <noreply@svc.dev>');

    const twice = svc(['cr', 'merge', '1'], userEnv());
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/change request #1 is already merged/);
    const badToken = svc(['cr', 'close', '1'], { ...userEnv(), SVC_CLI_TOKEN: 'svc_not-a-token' });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/unknown or revoked token/);
    // what to do next, and which token was refused
    expect(badToken.stderr).toContain('`svc tokens create`');
    expect(badToken.stderr).toContain('[the token of SVC_CLI_TOKEN]');
  });

  it('edit and request-changes: the title, the description and a note, shown by svc cr show; bad input says so', () => {
    work.branch('notes', { 'notes.txt': 'n\n' }, { from: 'main' });
    const number = String(JSON.parse(svc(['cr', 'open', '--title', 'Notes', '--head', 'notes', '--json'], userEnv()).stdout).number);
    const edited = svc(['cr', 'edit', number, '--title', 'Notes, renamed', '--description', 'two lines\nof description'], userEnv());
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stdout).toBe(`Edited CR #${number}: Notes, renamed.\n`);
    const nothing = svc(['cr', 'edit', number], userEnv());
    expect({ code: nothing.code, stderr: nothing.stderr }).toEqual({ code: 2, stderr: 'svc: nothing to change: pass --title and/or --description\n' });

    const asked = svc(['cr', 'request-changes', `#${number}`, '--feedback', 'rename notes.txt'], userEnv());
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe(`Requested changes on CR #${number}: no session opened it, so the note is kept on the change request only.\n`);
    expect(svc(['cr', 'request-changes', number, '--feedback', ' '], userEnv()).stderr).toBe('svc: feedback is required and must not be empty (HTTP 400)\n');
    expect(svc(['cr', 'request-changes', number], userEnv()).stderr).toContain("required option '--feedback <text>' not specified");

    const shown = svc(['cr', 'show', number], userEnv()).stdout;
    expect(shown).toContain(`CR #${number}: Notes, renamed\n`);
    expect(shown).toContain('\n  two lines\n  of description\n');
    expect(shown).toMatch(/\nRequested changes:\n {2}\S+Z \S+: rename notes\.txt\n/);
    expect(svc(['cr', 'close', number], userEnv()).code).toBe(0);
    expect(svc(['cr', 'request-changes', number, '--feedback', 'x'], userEnv()).code).toBe(1); // 409: not open
  });

  it('show says the manifest gate will refuse a head whose manifest is invalid, however git would merge it', () => {
    work.branch('bad-manifest', { 'svc.yaml': 'svc_version: 2\ndefault_agnet: coder\nagents:\n  coder: {}\n' }, { from: 'main' });
    const opened = svc(['cr', 'open', '--title', 'Bad manifest', '--head', 'bad-manifest', '--json'], userEnv());
    expect(opened.code, opened.stderr).toBe(0);
    const number = String(JSON.parse(opened.stdout).number);
    const show = svc(['cr', 'show', number], userEnv());
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain([
      'Merge preview:',
      '  REFUSED by the manifest gate: the manifest on bad-manifest has 1 issue; fix it on the branch, then merge:',
      '    /default_agent: is required (unknown key default_agnet: did you mean default_agent?)',
      '  then git: can ',
    ].join('\n'));
    expect(JSON.parse(svc(['cr', 'show', number, '--json'], userEnv()).stdout).merge_preview.manifest_issues).toEqual([
      { path: '/default_agent', message: 'is required (unknown key default_agnet: did you mean default_agent?)' },
    ]);
    // what the preview said is what the merge does
    const before = host.tip('main');
    const merge = svc(['cr', 'merge', number], userEnv());
    expect(merge.code).toBe(1);
    expect(merge.stderr).toMatch(/the manifest on bad-manifest is invalid: \/default_agent: is required/);
    expect(host.tip('main')).toBe(before);
  });

  it('show of a CR whose head branch was deleted on the host: the CR, and why there is no preview (it printed only the 404)', () => {
    work.branch('short-lived', { 'short.txt': 'short\n' }, { from: 'main' });
    const opened = svc(['cr', 'open', '--project', 'crcli', '--title', 'Short lived', '--head', 'short-lived', '--json'], userEnv());
    expect(opened.code, opened.stderr).toBe(0);
    const { number } = JSON.parse(opened.stdout) as { number: number };
    git(host.hostDir, 'update-ref', '-d', 'refs/heads/short-lived');
    const show = svc(['cr', 'show', '--project', 'crcli', String(number)], userEnv());
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`CR #${number}: Short lived`);
    expect(show.stdout).toContain('Merge preview: unavailable: the head branch short-lived does not exist in the repository (any more): push it again, or close the change request');
    const json = JSON.parse(svc(['cr', 'show', '--project', 'crcli', String(number), '--json'], userEnv()).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ change_request: { number, status: 'open' }, merge_preview: null });
    expect(json.merge_preview_error).toMatch(/^the head branch short-lived does not exist/);
    expect(svc(['cr', 'close', '--project', 'crcli', String(number)], userEnv()).code).toBe(0);
  });

  it('in a linked checkout, open takes the branch checked out as --head (SPEC §4.6); detached, it says what to pass', () => {
    expect(git(work.dir, 'config', '--local', '--get', 'svc.project')).toBe(projectId); // linked above
    work.branch('my-work', { 'mine.txt': 'mine\n' }, { from: 'main' });
    const opened = svc(['cr', 'open', '--title', 'My work', '--json'], userEnv());
    expect(opened.code, opened.stderr).toBe(0);
    expect(JSON.parse(opened.stdout)).toMatchObject({ head_ref: 'my-work', base_ref: 'main', status: 'open' });
    // the session's variable still wins over the checkout
    work.branch('env-work', { 'env.txt': 'env\n' }, { from: 'main' });
    work.checkout('my-work');
    const fromEnv = svc(['cr', 'open', '--title', 'From the environment', '--json'], { ...userEnv(), SVC_BRANCH_NAME: 'env-work' });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ head_ref: 'env-work' });

    git(work.dir, 'checkout', '-q', '--detach', 'my-work');
    const detached = svc(['cr', 'open', '--title', 'x'], userEnv());
    expect(detached.code).toBe(2);
    expect(detached.stderr).toContain('svc: no head branch: pass --head, or set SVC_BRANCH_NAME (or SVC_HEAD_REF), or run it on your branch in a checkout linked with svc projects link');
    git(work.dir, 'checkout', '-q', 'my-work');
  });

  it('projects create --repo takes a relative path to a repository on this machine, as git clone does', () => {
    const parent = path.dirname(host.hostDir);
    const created = svc(['projects', 'create', 'relative', '--repo', `./${path.basename(host.hostDir)}`, '--json'], userEnv(), parent);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'relative', repo_url: host.hostDir });
    const missing = svc(['projects', 'create', 'missing', '--repo', './not-there.git'], userEnv(), parent);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('repo_url: invalid repository URL ./not-there.git: expected an absolute path');
    expect(svc(['projects', 'delete', 'relative', '--yes'], userEnv()).code).toBe(0);
  });

  it("a merge into a working copy's checked-out branch is refused saying how to fix it; with updateInstead it merges", () => {
    const copy = path.join(path.dirname(host.hostDir), 'working-copy');
    git(path.dirname(copy), 'init', '-q', '-b', 'main', copy);
    git(copy, 'commit', '-q', '--allow-empty', '-m', 'init');
    git(copy, 'branch', 'fix');
    git(copy, 'checkout', '-q', 'fix');
    git(copy, 'commit', '-q', '--allow-empty', '-m', 'a fix');
    git(copy, 'checkout', '-q', 'main');
    const created = svc(['projects', 'create', 'copy', '--repo', copy], userEnv());
    expect(created.code, created.stderr).toBe(0);
    const env = { ...userEnv(), SVC_PROJECT_ID: 'copy' };
    expect(svc(['cr', 'open', '--head', 'fix', '--title', 'A fix'], env).code).toBe(0);
    const refused = svc(['cr', 'merge', '1'], env);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe('svc: the repository host rejected the push to main: main is checked out in a working copy of the repository, and git does not update a checked-out branch; '
      + 'make the repository bare (git clone --bare), or let pushes update that working copy while it is clean: git config receive.denyCurrentBranch updateInstead, in it (HTTP 409)\n');
    git(copy, 'config', 'receive.denyCurrentBranch', 'updateInstead');
    expect(svc(['cr', 'merge', '1'], env)).toMatchObject({ code: 0, stdout: expect.stringContaining('Merged CR #1 into main') });
    expect(git(copy, 'log', '-1', '--format=%s')).toBe('a fix'); // the working copy was updated
    expect(svc(['projects', 'delete', 'copy', '--yes'], userEnv()).code).toBe(0);
  });
});
