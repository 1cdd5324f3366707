// Splits a unified patch (git diff output) into per-file sections with numbered lines. Pure,
// so it is unit-tested (diff.test.ts) and fast on large patches (one pass, no regex per char).

export type LineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'meta';

export interface DiffLine {
  kind: LineKind;
  text: string;
  /** Line number in the old file (deletions and context). */
  old?: number;
  /** Line number in the new file (additions and context). */
  new?: number;
}

export interface FileSection {
  /** `diff --git` header line, which names both paths. */
  header: string;
  /** The new path (the old one for deletions), as git wrote it in `+++`/`---` or the header. */
  path: string;
  lines: DiffLine[];
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

function pathFrom(line: string): string | null {
  // "+++ b/path" or "--- a/path"; /dev/null for the side that does not exist
  const name = line.slice(4);
  if (name === '/dev/null') return null;
  return name.startsWith('a/') || name.startsWith('b/') ? name.slice(2) : name;
}

export function splitPatch(patch: string): FileSection[] {
  const sections: FileSection[] = [];
  let section: FileSection | null = null;
  let inHunk = false;
  let oldNo = 0;
  let newNo = 0;
  const lines = patch.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const text of lines) {
    if (text.startsWith('diff --git ')) {
      const m = / b\/(.*)$/.exec(text);
      section = { header: text, path: m?.[1] ?? text.slice(11), lines: [] };
      sections.push(section);
      inHunk = false;
      continue;
    }
    if (!section) continue;
    if (!inHunk) {
      if (text.startsWith('+++ ') || text.startsWith('--- ')) {
        const name = pathFrom(text);
        if (name && (text.startsWith('+++ ') || section.path === '')) section.path = name;
        continue;
      }
      const hunk = HUNK.exec(text);
      if (!hunk) {
        // mode changes and "Binary files differ" say something; blob ids do not
        if (!text.startsWith('index ')) section.lines.push({ kind: 'meta', text });
        continue;
      }
    }
    const first = text.charCodeAt(0);
    if (first === 64 /* @ */ && text.startsWith('@@')) {
      const hunk = HUNK.exec(text);
      if (hunk) {
        oldNo = Number(hunk[1]);
        newNo = Number(hunk[2]);
        inHunk = true;
      }
      section.lines.push({ kind: 'hunk', text });
    } else if (first === 43 /* + */) {
      section.lines.push({ kind: 'add', text, new: newNo++ });
    } else if (first === 45 /* - */) {
      section.lines.push({ kind: 'del', text, old: oldNo++ });
    } else if (first === 92 /* \ */) {
      section.lines.push({ kind: 'meta', text });
    } else {
      section.lines.push({ kind: 'ctx', text, old: oldNo++, new: newNo++ });
    }
  }
  return sections;
}
