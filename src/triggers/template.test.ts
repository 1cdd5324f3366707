import { describe, expect, it } from 'vitest';
import { renderTemplate } from './template.js';

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
