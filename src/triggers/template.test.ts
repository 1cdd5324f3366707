import { describe, expect, it } from 'vitest';
import { renderPrefix, renderTemplate } from './template.js';
import { boundPrompt, MAX_PROMPT_BYTES } from '../sessions/prompt-size.js';

const vars = {
  trigger: { slug: 'nightly', type: 'cron', kind: 'git' },
  body: { code: 'a < b && "c"', ref: 'refs/heads/main', commits: [{ id: 1 }], repo: { name: 'x', private: false }, n: 0, nil: null, 'with space': 'y' },
  fired_at: '2030-01-01T00:00:00.000Z',
};

describe('renderTemplate', () => {
  it.each([
    ['plain text stays', 'no tags here', 'no tags here'],
    ['dotted path', '{{trigger.slug}}', 'nightly'],
    ['spaces inside the braces', '{{ trigger.slug }} / {{   body.ref   }}', 'nightly / refs/heads/main'],
    ['no HTML escaping', '{{ body.code }}', 'a < b && "c"'],
    ['triple braces render the same', '{{{ body.code }}}', 'a < b && "c"'],
    ['missing value renders empty', '[{{ body.nope }}][{{ nope.deeper.still }}]', '[][]'],
    ['path through a scalar renders empty', '[{{ trigger.slug.length }}]', '[]'],
    ['array renders as JSON', '{{ body.commits }}', '[{"id":1}]'],
    ['object renders as JSON', '{{ body.repo }}', '{"name":"x","private":false}'],
    ['zero and false render as text', '{{ body.n }} {{ body.repo.private }}', '0 false'],
    ['null renders empty', '[{{ body.nil }}]', '[]'],
    ['empty tag renders empty', 'a{{ }}b', 'ab'],
    ['a section tag names no variable', 'a{{#body}}b{{/body}}c', 'abc'],
    ['inherited properties are not variables', '[{{ body.constructor }}][{{ __proto__ }}]', '[][]'],
    ['multi-line template', 'Line 1 {{ trigger.type }}\nLine 2 {{ fired_at }}', 'Line 1 cron\nLine 2 2030-01-01T00:00:00.000Z'],
    ['a value that looks like a tag is not re-rendered', '{{ body.tag }}', '{{ trigger.slug }}'],
    ['spaces and a newline around the path', '{{\n trigger.slug \t}}', 'nightly'],
    ['a brace too many on the right', '{{ trigger.slug }}}', 'nightly'],
    // linear in the template: `{{` and a run of spaces without an end was cubic (4,000 spaces: over 20 s)
    ['an unclosed tag and 100,000 spaces stay as they are', `{{${' '.repeat(100_000)}x`, `{{${' '.repeat(100_000)}x`],
    ['many unclosed tags', '{{ a '.repeat(20_000), '{{ a '.repeat(20_000)],
  ])('%s', (_name, template, expected) => {
    expect(renderTemplate(template, { ...vars, body: { ...vars.body, tag: '{{ trigger.slug }}' } })).toBe(expected);
  });
});

describe('renderPrefix', () => {
  const cut = (template: string, variables: Record<string, unknown>) => {
    const { text, bytes } = renderPrefix(template, variables, MAX_PROMPT_BYTES);
    return boundPrompt(text, bytes);
  };

  it('cuts to the same prompt as rendering the whole, with the whole size in the note', () => {
    let seed = 3;
    const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    for (let round = 0; round < 100; round++) {
      const body = { text: 'é'.repeat(random(40_000)), list: Array.from({ length: random(500) }, (_, i) => ({ i, s: 'ü'.repeat(random(50)) })) };
      const template = Array.from({ length: 1 + random(8) }, () => ['{{ body.text }}', '{{body.list}}', 'plain ✓ text ', '{{ missing }}'][random(4)]).join('\n');
      expect(cut(template, { body })).toBe(boundPrompt(renderTemplate(template, { body })));
    }
  });

  it('renders a 1 MiB payload named in 600 tags: the whole would be more than a string may hold', () => {
    // rendered whole, it threw (Invalid string length) at every reconcile of the fire
    const body = { text: 'x'.repeat(1024 * 1024) };
    const prompt = cut('{{ body.text }}'.repeat(600), { body });
    expect(Buffer.byteLength(prompt)).toBeLessThanOrEqual(MAX_PROMPT_BYTES);
    expect(prompt).toMatch(/^x+\n\n\[svc: this prompt was cut to 65536 bytes; it had 629145600\]$/);
  });
});
