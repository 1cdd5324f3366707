import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('svc writing into a closed pipe', () => {
  it('exits 0 without a stack trace when the reader has gone away (svc --help | head)', async () => {
    const child = spawn(process.execPath, ['bin/svc.js', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before svc writes a byte
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
