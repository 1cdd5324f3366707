// Project secrets through `svc dev` and the built CLI: set from stdin and --value, list without
// values, the reserved prefix refused, and the values nowhere but in the project's Secret.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, run, runOk } from '../dev/util.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
const VALUE = 'sk-live-51Hvalue-from-stdin';
const OTHER_VALUE = 'second-secret-value-42';

describe('svc secrets through svc dev', () => {
  let tmp: string;
  let dev: DevInstance;
  const svc = (args: string[], input?: string) => run(process.execPath, [SVC, ...args], dev.env, input);

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-secrets-dev-'));
    makeRepo(path.join(tmp, 'repo'), { 'README.md': '# secrets\n' });
    dev = await startDev({ dataDir: path.join(tmp, 'dev') });
    await runOk(process.execPath, [SVC, 'projects', 'create', 'vault', '--repo', path.join(tmp, 'repo')], dev.env);
  }, 120_000);

  afterAll(async () => {
    await dev?.stop();
    if (tmp) removeDevDir(tmp);
  });

  it('sets from stdin and --value, lists names without values', async () => {
    const fromStdin = await svc(['secrets', 'set', 'API_KEY', '--project', 'vault'], `${VALUE}\n`);
    expect(fromStdin.stderr).toBe('');
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout).toContain('Secret API_KEY set');
    expect((await svc(['secrets', 'set', 'OTHER', '--value', OTHER_VALUE, '--project', 'vault', '--json'])).stdout).toContain('"set": true');
    // an empty value is a value (docs/secrets.md), but an unset variable piped in is a likely mistake: said
    expect((await svc(['secrets', 'set', 'EMPTY', '--project', 'vault'], '')).stdout).toBe('Secret EMPTY set to an empty value (nothing came on stdin). New sessions get it; running ones keep what they started with.\n');
    expect((await svc(['secrets', 'rm', 'EMPTY', '--project', 'vault'])).code).toBe(0);

    const listed = await svc(['secrets', 'ls', '--project', 'vault', '--json']);
    expect(listed.code).toBe(0);
    const listing = JSON.parse(listed.stdout) as { secrets: { name: string }[]; revision: string };
    expect(listing.secrets.map((s) => s.name)).toEqual(['API_KEY', 'OTHER']);
    expect(listing.revision).toMatch(/^\d+$/);
    const table = await svc(['secrets', 'ls', '--project', 'vault']);
    expect(table.stdout).toMatch(/API_KEY/);
    expect(table.stdout).not.toContain(VALUE);

    const secret = JSON.parse(await runOk('kubectl', ['get', 'secret', 'vault-secrets', '-o', 'json'], dev.env)) as { data: Record<string, string> };
    expect(Buffer.from(secret.data.API_KEY!, 'base64').toString()).toBe(VALUE); // the line ending echo adds is dropped
  });

  it('refuses the reserved SVC_ prefix (400, the CLI says why) and a bad name', async () => {
    const res = await fetch(`${dev.apiUrl}/projects`, { headers: { authorization: `Bearer ${dev.token}` } });
    const { projects } = await res.json() as { projects: { id: string; name: string }[] };
    const id = projects.find((p) => p.name === 'vault')!.id;
    const put = await fetch(`${dev.apiUrl}/projects/${id}/secrets/SVC_TOKEN`, {
      method: 'PUT', headers: { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ value: 'x' }),
    });
    expect(put.status).toBe(400);
    expect(((await put.json()) as { error: string }).error).toMatch(/reserved/);
    const cli = await svc(['secrets', 'set', 'SVC_MINE', '--value', 'x', '--project', 'vault']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/reserved/);
    expect((await svc(['secrets', 'set', 'lower', '--value', 'x', '--project', 'vault'])).code).toBe(1);
  });

  it('keeps the values out of every other resource, every Event and the logs', async () => {
    const everything = await runOk('kubectl', ['get', 'secrets,events,configmaps,projects,sessions,sandboxes,triggers,changerequests', '-A', '-o', 'json'], dev.env);
    const items = (JSON.parse(everything) as { items: { kind: string; metadata: { name: string } }[] }).items;
    const holders = items.filter((item) => {
      const text = JSON.stringify(item);
      return [VALUE, OTHER_VALUE].some((v) => text.includes(v) || text.includes(Buffer.from(v).toString('base64')));
    });
    expect(holders.map((i) => `${i.kind}/${i.metadata.name}`)).toEqual(['Secret/vault-secrets']);
    expect(items.some((i) => i.kind === 'Event' && JSON.stringify(i).includes('API_KEY'))).toBe(true);
    expect(dev.output()).not.toContain(VALUE);
    expect(dev.output()).not.toContain(OTHER_VALUE);
  });

  it('removes a secret', async () => {
    expect((await svc(['secrets', 'rm', 'OTHER', '--project', 'vault'])).code).toBe(0);
    const listing = JSON.parse((await svc(['secrets', 'ls', '--project', 'vault', '--json'])).stdout) as { secrets: { name: string }[] };
    expect(listing.secrets.map((s) => s.name)).toEqual(['API_KEY']);
    const again = await svc(['secrets', 'rm', 'OTHER', '--project', 'vault']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no secret OTHER');
  });
});
