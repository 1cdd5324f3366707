import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { envFileText, parseEnvFile } from './env-file.js';

describe('DIR/env', () => {
  it("sh sources it as written, and it reads back, for a data directory with a space and a quote", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-env-'));
    try {
      const values = { KUBECONFIG: "/tmp/it's a dir/kubeconfig", SVC_API_URL: 'http://127.0.0.1:8080/v1', SVC_CLI_TOKEN: 'svc_abc-_' };
      const file = path.join(dir, 'env');
      writeFileSync(file, `${envFileText(values)}export PATH='/x/bin':"$PATH"\n`);
      const sourced = execFileSync('sh', ['-c', `. '${file}' && printf '%s\\n' "$KUBECONFIG" "$SVC_API_URL" "$SVC_CLI_TOKEN"`], { encoding: 'utf8' });
      expect(sourced).toBe(`${values.KUBECONFIG}\n${values.SVC_API_URL}\n${values.SVC_CLI_TOKEN}\n`);
      expect(parseEnvFile(`${envFileText(values)}export PATH='/x/bin':"$PATH"\n`)).toEqual(values);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
