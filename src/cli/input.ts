// What a command reads besides its flags: text piped on stdin, or a file (`-` meaning stdin).
import { readFile } from 'node:fs/promises';
import { CliError, EXIT } from './output.js';

/**
 * Everything piped on stdin, without the one line ending `echo` adds; a terminal on stdin is a
 * usage error saying `whenTerminal` (nothing was piped: the command would wait for a person).
 */
export async function readStdin(whenTerminal: string): Promise<string> {
  if (process.stdin.isTTY) throw new CliError(whenTerminal, EXIT.usage);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** A text file's content (`-`: stdin), without one trailing line ending; an unreadable file is a usage error naming it. */
export async function readTextFile(path: string, flag: string): Promise<string> {
  if (path === '-') return readStdin(`${flag} -: nothing is piped on stdin`);
  try {
    return (await readFile(path, 'utf8')).replace(/\r?\n$/, '');
  } catch (error) {
    throw new CliError(`${flag} ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`, EXIT.usage);
  }
}
