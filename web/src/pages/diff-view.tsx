// The coloured unified diff: one section per file with its status and counts; files with many
// changed lines start collapsed so a large change request renders at once.
import { useState } from 'preact/hooks';
import type { FileSection } from '../diff.js';

export interface DiffFileEntry { path: string; status: 'added' | 'modified' | 'deleted'; additions: number; deletions: number; binary: boolean }
export interface DiffBody { base_sha: string; head_sha: string; merge_base: string | null; patch: string; files: DiffFileEntry[]; additions: number; deletions: number }

/** Files whose diff has more lines than this start collapsed. */
export const COLLAPSE_LINES = 400;
/** Lines per block; the stylesheet lets the browser skip laying out blocks off screen (content-visibility). */
const BLOCK_LINES = 100;

function blocks<T>(lines: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < lines.length; i += BLOCK_LINES) out.push(lines.slice(i, i + BLOCK_LINES));
  return out;
}

function FileDiff({ file, section }: { file: DiffFileEntry; section: FileSection | undefined }) {
  const lines = section?.lines ?? [];
  const [open, setOpen] = useState(lines.length <= COLLAPSE_LINES);
  return (
    <section class="file" aria-label={file.path}>
      <header class="file-head">
        <button type="button" class="link" aria-expanded={open} aria-label={`${open ? 'Collapse' : 'Expand'} ${file.path}`} onClick={() => setOpen(!open)}>{open ? '▾' : '▸'}</button>
        <code class="path">{file.path}</code>
        <span class={`fstatus fstatus-${file.status}`}>{file.status}</span>
        <span class="counts"><span class="plus">+{file.additions}</span> <span class="minus">−{file.deletions}</span></span>
      </header>
      {file.binary ? <p class="muted pad">Binary file not shown.</p> : !open ? (
        <p class="pad"><button type="button" class="secondary" onClick={() => setOpen(true)}>Show {lines.length} lines</button></p>
      ) : (
        <div class="diff" role="table" aria-label={`Diff of ${file.path}`}>
          {blocks(lines).map((block, b) => (
            <div key={b} class={block.length === BLOCK_LINES ? 'blk lazy' : 'blk'} role="rowgroup">
              {block.map((line, i) => (
                <div key={i} class={`line l-${line.kind}`} role="row">
                  <span class="ln" role="cell">{line.old ?? ''}</span>
                  <span class="ln" role="cell">{line.new ?? ''}</span>
                  <span class="code" role="cell">{line.text}</span>
                </div>
              ))}
            </div>
          ))}
        </div>
      )}
    </section>
  );
}

export function DiffView({ diff, sections }: { diff: DiffBody; sections: FileSection[] }) {
  const byPath = new Map(sections.map((s) => [s.path, s]));
  return (
    <section aria-label="Diff">
      <h2>Changes <span class="counts"><span class="plus">+{diff.additions}</span> <span class="minus">−{diff.deletions}</span></span> <span class="muted">in {diff.files.length} file{diff.files.length === 1 ? '' : 's'}</span></h2>
      {diff.files.length === 0 ? <p class="muted">No changes.</p> : null}
      {diff.files.map((file, i) => <FileDiff key={file.path} file={file} section={byPath.get(file.path) ?? sections[i]} />)}
    </section>
  );
}
