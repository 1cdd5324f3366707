import { describe, expect, it } from 'vitest';
import { splitPatch } from './diff.js';

const PATCH = `diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1,3 +1,3 @@
 # title
-old line
+new line
 last
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 3333333..0000000
--- a/gone.txt
+++ /dev/null
@@ -1,2 +0,0 @@
--- looks like a header
-x
\\ No newline at end of file
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
++++ also content
`;

describe('splitPatch', () => {
  it('splits per file, numbers lines from the hunk headers and keeps content that looks like headers', () => {
    const sections = splitPatch(PATCH);
    expect(sections.map((s) => s.path)).toEqual(['README.md', 'gone.txt', 'new.txt']);
    expect(sections[0]!.lines).toEqual([
      { kind: 'hunk', text: '@@ -1,3 +1,3 @@' },
      { kind: 'ctx', text: ' # title', old: 1, new: 1 },
      { kind: 'del', text: '-old line', old: 2 },
      { kind: 'add', text: '+new line', new: 2 },
      { kind: 'ctx', text: ' last', old: 3, new: 3 },
    ]);
    expect(sections[1]!.lines.slice(-3)).toEqual([
      { kind: 'del', text: '--- looks like a header', old: 1 },
      { kind: 'del', text: '-x', old: 2 },
      { kind: 'meta', text: '\\ No newline at end of file' },
    ]);
    expect(sections[2]!.lines.at(-1)).toEqual({ kind: 'add', text: '++++ also content', new: 1 });
  });

  it('returns no sections for an empty patch', () => {
    expect(splitPatch('')).toEqual([]);
  });
});
