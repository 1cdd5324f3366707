import { describe, expect, it } from 'vitest';
import { boundPrompt, MAX_PROMPT_BYTES } from './prompt-size.js';

describe('boundPrompt', () => {
  it('keeps a prompt that fits, 64 KiB exactly included', () => {
    expect(boundPrompt('fix the tests')).toBe('fix the tests');
    const full = 'x'.repeat(MAX_PROMPT_BYTES);
    expect(boundPrompt(full)).toBe(full);
  });

  it.each([
    ['ASCII', 'x'.repeat(200_000)],
    ['two-byte characters', 'é'.repeat(100_000)],
    ['four-byte characters', '😀'.repeat(50_000)],
  ])('cuts a larger one (%s) between characters, within the bound, saying so', (_what, text) => {
    const cut = boundPrompt(text);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_PROMPT_BYTES);
    expect(Buffer.byteLength(cut)).toBeGreaterThan(MAX_PROMPT_BYTES - 80);
    expect(cut).toMatch(new RegExp(`\\n\\n\\[svc: this prompt was cut to ${MAX_PROMPT_BYTES} bytes; it had ${Buffer.byteLength(text)}\\]$`));
    expect(cut).not.toContain('\uFFFD');
    expect(text.startsWith(cut.slice(0, cut.indexOf('\n\n[svc:')))).toBe(true);
  });
});
