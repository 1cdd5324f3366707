import { describe, expect, it } from 'vitest';
import { appendPromptPatch, pendingPrompts, appendPrompts, removePromptsPatch, PENDING_PROMPTS_ANNOTATION, PENDING_PROMPTS_MAX_BYTES } from './session-prompts.js';

/** The patch appending `prompt`, which must fit. */
function patchOf(result: ReturnType<typeof appendPromptPatch>) {
  if ('refused' in result) throw new Error(result.refused);
  return result;
}
/** Why appending `prompt` is refused, or null. */
const promptQueueFull = (...args: Parameters<typeof appendPromptPatch>) => { const result = appendPromptPatch(...args); return 'refused' in result ? result.refused : null; };

describe('pending prompts', () => {
  const p1 = { id: 'a', text: 'first', source: 'api' as const, at: '2026-11-23T12:00:00Z' };
  const p2 = { id: 'b', text: 'second', source: 'feedback' as const, at: '2026-11-23T12:00:01Z' };

  it('appends in order under the read resourceVersion', () => {
    const s0 = { metadata: { resourceVersion: '7' } };
    const patch1 = patchOf(appendPromptPatch(s0, p1));
    expect(patch1.metadata.resourceVersion).toBe('7');
    const s1 = { metadata: { resourceVersion: '8', annotations: patch1.metadata.annotations } };
    const s2 = { metadata: { resourceVersion: '9', annotations: patchOf(appendPromptPatch(s1, p2)).metadata.annotations } };
    expect(pendingPrompts(s2).map((p) => p.text)).toEqual(['first', 'second']);
  });

  it('removes only the delivered prompts and deletes the annotation when none remain', () => {
    const s = { metadata: { annotations: { [PENDING_PROMPTS_ANNOTATION]: JSON.stringify([p1, p2]) } } };
    expect(JSON.parse(removePromptsPatch(s, ['a']).metadata.annotations[PENDING_PROMPTS_ANNOTATION]!)).toEqual([p2]);
    expect(removePromptsPatch(s, ['a', 'b']).metadata.annotations[PENDING_PROMPTS_ANNOTATION]).toBeNull();
  });

  it('says when an append would take the waiting prompts past PENDING_PROMPTS_MAX_BYTES (bytes, not characters)', () => {
    const big = (id: string, text: string) => ({ ...p1, id, text });
    let session: { metadata: { name: string; annotations?: Record<string, string> } } = { metadata: { name: 's1' } };
    for (const id of ['1', '2']) {
      expect(promptQueueFull(session, big(id, 'x'.repeat(64 * 1024)))).toBeNull();
      session = { metadata: { name: 's1', annotations: patchOf(appendPromptPatch(session, big(id, 'x'.repeat(64 * 1024)))).metadata.annotations } };
    }
    const fits = big('3', 'x'.repeat(60 * 1024));
    expect(promptQueueFull(session, fits)).toBeNull();
    const tooBig = big('3', 'é'.repeat(32 * 1024)); // 64 KiB in UTF-8, 32 Ki characters
    expect(Buffer.byteLength(JSON.stringify([...pendingPrompts(session), tooBig]))).toBeGreaterThan(PENDING_PROMPTS_MAX_BYTES);
    expect(promptQueueFull(session, tooBig)).toBe(`session s1 already has 2 prompt(s) waiting, ${PENDING_PROMPTS_MAX_BYTES} bytes at most in all`);
  });

  it('appends a batch in order, skipping the prompts already waiting and refusing those past the bound, bytes counted as JSON.stringify counts them', () => {
    const text = (n: number) => 'x'.repeat(n);
    const session = { metadata: { name: 's1', annotations: { [PENDING_PROMPTS_ANNOTATION]: JSON.stringify([{ ...p1, text: text(100_000) }]) } } };
    const batch = [p1, { ...p2, id: 'c', text: text(60_000) }, { ...p2, id: 'd', text: text(60_000) }, { ...p2, id: 'e', text: 'small' }];
    const { prompts, refused } = appendPrompts(session, batch);
    expect(prompts.map((p) => p.id)).toEqual(['a', 'c', 'e']);
    expect([...refused]).toEqual([['d', `session s1 already has 2 prompt(s) waiting, ${PENDING_PROMPTS_MAX_BYTES} bytes at most in all`]]);
    expect(Buffer.byteLength(JSON.stringify(prompts))).toBeLessThanOrEqual(PENDING_PROMPTS_MAX_BYTES);
    // exactly at the bound fits; a byte more does not
    const empty = { metadata: { name: 's2' } };
    const overhead = Buffer.byteLength(JSON.stringify([{ ...p1, text: '' }]));
    expect(appendPrompts(empty, [{ ...p1, text: text(PENDING_PROMPTS_MAX_BYTES - overhead) }]).refused.size).toBe(0);
    expect(appendPrompts(empty, [{ ...p1, text: text(PENDING_PROMPTS_MAX_BYTES - overhead + 1) }]).refused.size).toBe(1);
  });

  it('reads a broken annotation as no prompts', () => {
    expect(pendingPrompts({ metadata: { annotations: { [PENDING_PROMPTS_ANNOTATION]: '{nope' } } })).toEqual([]);
  });
});
