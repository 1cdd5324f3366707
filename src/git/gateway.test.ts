import { describe, expect, it } from 'vitest';
import { advertisementError, pktLine, wantedObjects } from './gateway.js';

const pkt = (line: string) => pktLine(line).toString('latin1');
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(64);

describe('wantedObjects', () => {
  it.each([
    ['protocol v0: capabilities after the first want, then haves', pkt(`want ${A} multi_ack_detailed side-band-64k ofs-delta agent=git/2.39.5\n`) + pkt(`want ${B}\n`) + '0000' + pkt(`have ${C}\n`) + pkt('done\n'), [A, B]],
    ['protocol v2: command, delimiter, arguments', pkt('command=fetch\n') + pkt('agent=git/2.39.5\n') + '0001' + pkt('thin-pack\n') + pkt(`want ${A}\n`) + pkt(`have ${B}\n`) + pkt(`want ${C}\n`) + pkt('done\n') + '0000', [A, C]],
    ['a want after the haves counts too', pkt(`have ${B}\n`) + pkt(`want ${A}\n`) + '0000', [A]],
    ['want-ref is left to upload-pack (refused there)', pkt('command=fetch\n') + '0001' + pkt('want-ref refs/heads/main\n') + '0000', []],
    ['ls-refs asks for no object', pkt('command=ls-refs\n') + '0001' + pkt('ref-prefix refs/heads/\n') + '0000', []],
    ['an empty body', '', []],
  ])('%s', (_name, body, wants) => {
    expect(wantedObjects(Buffer.from(body, 'latin1'))).toEqual(wants);
  });

  it.each([
    ['a length that is not hex', `zzzzwant ${A}\n`],
    ['a line cut short', pkt(`want ${A}\n`).slice(0, 20)],
    ['a want of an abbreviated id', pkt('want abc123\n')],
    ['a want of an upper-case id', pkt(`want ${A.toUpperCase()}\n`)],
    ['a want with trailing junk glued to the id', pkt(`want ${A}x\n`)],
  ])('null (refused) for %s', (_name, body) => {
    expect(wantedObjects(Buffer.from(body, 'latin1'))).toBeNull();
  });
});

describe('pktLine', () => {
  it('counts bytes, not characters (a host error may name a path in any script)', () => {
    expect(pktLine('§\n').toString('utf8')).toBe('0007§\n');
  });

  it('an info/refs error: the service line, a flush, the ERR packet, each with its own length', () => {
    for (const service of ['git-upload-pack', 'git-receive-pack'] as const) {
      const text = advertisementError(service, 'the host is gone: «café»').toString('latin1');
      const lines: string[] = [];
      for (let at = 0; at < text.length;) {
        const size = Number.parseInt(text.slice(at, at + 4), 16);
        lines.push(size < 4 ? '' : Buffer.from(text.slice(at + 4, at + size), 'latin1').toString('utf8'));
        at += Math.max(size, 4);
      }
      expect(lines).toEqual([`# service=${service}\n`, '', 'ERR the host is gone: «café»\n']);
    }
  });
});
