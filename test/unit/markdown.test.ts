import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderBlocks } from '../../src/cli/markdown/render.js';
import { findCuts, MarkdownStream } from '../../src/cli/markdown/stream.js';
import { textWidth } from '../../src/cli/markdown/runs.js';

const ANSI = /\x1b\[[0-9;]*m/g;
const plain = (s: string) => s.replace(ANSI, '');

function renderWhole(text: string, width: number, color: boolean): string {
  const md = new MarkdownStream((src) => renderBlocks(src, { width, color }));
  return md.push(text) + md.end();
}

function renderSplit(pieces: string[], width: number, color: boolean): string {
  const md = new MarkdownStream((src) => renderBlocks(src, { width, color }));
  return pieces.map((p) => md.push(p)).join('') + md.end();
}

// The constructs answers are made of, with the ways they go wrong when cut: open fences, blank lines
// inside code, lists that go on after a blank line, tables, quotes, HTML comments, CRLF, wide letters.
const word = fc.constantFrom('river', 'Danube', '**bold**', '*it*', '`code`', '[link](https://x.io/a)', '漢字', 'a_b', '~~old~~', '1.', '-', '#', '|', '>', '<!--', '-->', '```', 'x'.repeat(30));
const sentence = fc.array(word, { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));
// Prose only: raw HTML and code are shown as they are, never wrapped.
const prose = fc.array(fc.constantFrom('river', 'Danube', '**bold**', '*it*', '`code`', '[link](https://x.io/a)', '漢字', 'a_b', 'x'.repeat(30)), { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));
const block = fc.oneof(
  sentence,
  sentence.map((s) => `# ${s}`),
  sentence.map((s) => `### ${s}`),
  fc.array(sentence, { minLength: 1, maxLength: 4 }).map((items) => items.map((s) => `- ${s}`).join('\n')),
  fc.array(sentence, { minLength: 1, maxLength: 4 }).map((items) => items.map((s, i) => `${i + 1}. ${s}`).join('\n')),
  sentence.map((s) => `  indented ${s}`),
  sentence.map((s) => `> ${s}\n> ${s}`),
  fc.tuple(fc.constantFrom('js', 'python', 'bash', '', 'nosuchlang'), fc.array(sentence, { maxLength: 4 })).map(([lang, ls]) => `\`\`\`${lang}\n${ls.join('\n\n')}\n\`\`\``),
  fc.array(sentence, { maxLength: 3 }).map((ls) => `| a | b |\n|:--|--:|\n${ls.map((l) => `| ${l} | 2 |`).join('\n')}`),
  sentence.map((s) => `<!-- ${s}\n\n${s} -->`),
  fc.constant('---'),
  fc.constant('```'),
);
const doc = fc.tuple(fc.array(block, { minLength: 1, maxLength: 8 }), fc.constantFrom('\n\n', '\n', '\n\n\n', '\r\n\r\n')).map(([bs, sep]) => bs.join(sep));

/** The text cut at the given places (sorted, deduplicated). */
function split(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((a) => a % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

describe('Markdown rendered as it streams', () => {
  it('any split of the text renders the same as the whole', () => {
    fc.assert(
      fc.property(doc, fc.array(fc.nat(), { maxLength: 30 }), fc.integer({ min: 10, max: 120 }), fc.boolean(), (text, at, width, color) => {
        expect(renderSplit(split(text, at), width, color)).toBe(renderWhole(text, width, color));
      }),
      { numRuns: 300 },
    );
  });

  it('one character at a time renders the same as the whole', () => {
    fc.assert(
      fc.property(doc, (text) => {
        expect(renderSplit([...text], 40, true)).toBe(renderWhole(text, 40, true));
      }),
      { numRuns: 100 },
    );
  });

  it('cuts fall only where the text so far decides them: a cut found early is a cut of the whole', () => {
    fc.assert(
      fc.property(doc, fc.nat(), (text, n) => {
        const prefix = text.slice(0, n % (text.length + 1));
        const all = findCuts(text, true);
        for (const c of findCuts(prefix, false)) expect(all).toContain(c);
      }),
    );
  });

  it('text outside code blocks fits the width, whatever the width when each block closes (a resize)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(prose, prose.map((s) => `- ${s}`), prose.map((s) => `> ${s}`), prose.map((s) => `## ${s}`)), { minLength: 1, maxLength: 8 }), fc.array(fc.integer({ min: 12, max: 100 }), { minLength: 8, maxLength: 8 }), (blocks, widths) => {
        let width = widths[0]!;
        const md = new MarkdownStream((src) => renderBlocks(src, { width, color: true }));
        blocks.forEach((b, i) => {
          width = widths[i]!;
          const out = md.push(`${b}\n\n`);
          for (const line of plain(out).split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(width);
        });
      }),
    );
  });
});

describe('Markdown on a terminal', () => {
  const show = (md: string, width = 60, color = false) => renderWhole(md, width, color);

  it('headings, emphasis, lists, links, quotes and rules', () => {
    expect(show('# Title\n\nSome **bold** and *it* with `code`.\n\n- one\n- two\n  - nested\n\n3. c\n4. d\n\n> said\n\n---')).toBe(
      '# Title\n\nSome bold and it with code.\n\n• one\n• two\n  • nested\n\n3. c\n4. d\n\n│ said\n\n' + '─'.repeat(60) + '\n',
    );
    expect(show('see [the docs](https://x.io/d) or <https://x.io>')).toBe('see the docs (https://x.io/d) or https://x.io\n');
    expect(show('**bold**', 60, true)).toBe('\x1b[1mbold\x1b[0m\n');
  });

  it('code blocks keep their text and fences, highlighted by language', () => {
    const out = show('```js\nconst a = "s"; // note\n```', 60, true);
    expect(plain(out)).toBe('```js\nconst a = "s"; // note\n```\n');
    expect(out).toContain('\x1b[35mconst\x1b[0m');
    expect(out).toContain('\x1b[32m"s"\x1b[0m');
    expect(show('```\nplain  spaced\n```')).toBe('```\nplain  spaced\n```\n');
  });

  it('tables: aligned columns, shrunk and wrapped to fit the width', () => {
    expect(show('| a | bb |\n|---|--:|\n| 1 | 2 |')).toBe('a │ bb\n──┼───\n1 │  2\n');
    const narrow = show('| name | note |\n|---|---|\n| Danube | flows through ten countries |', 20);
    for (const line of narrow.split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(20);
    expect(narrow).toMatch(/countries/);
  });

  it('a table with more columns than the window holds is drawn as records, each line within the width', () => {
    const names = Array.from({ length: 14 }, (_, i) => `col${i + 1}`);
    const src = `| ${names.join(' | ')} |\n|${names.map(() => '---').join('|')}|\n| ${names.map((_, i) => `v${i + 1}`).join(' | ')} |\n| ${names.map(() => '漢字').join(' | ')} |`;
    const out = show(src, 40);
    for (const line of out.split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(40);
    expect(out).toContain('col1: v1\ncol2: v2\n');
    expect(out).toContain('col14: v14\n\ncol1: 漢字\n');
    expect(show(`| ${names.join(' | ')} |\n|${names.map(() => '---').join('|')}|`, 40)).toBe(`${names.join('\n')}\n`);
  });

  it('a column is never narrower than its longest word: a table that would cut words is drawn as records', () => {
    const names = Array.from({ length: 12 }, (_, i) => `column${i}`);
    const src = `| ${names.join(' | ')} |\n|${names.map(() => '---').join('|')}|\n| ${names.map((_, i) => `value${i}`).join(' | ')} |`;
    for (const width of [100, 140, 200]) {
      const out = show(src, width);
      for (const line of out.split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(width);
      for (let i = 0; i < 12; i++) {
        expect(out, `width ${width}`).toMatch(new RegExp(`\\bcolumn${i}\\b`));
        expect(out, `width ${width}`).toMatch(new RegExp(`\\bvalue${i}\\b`));
      }
    }
    // Prose still wraps in its column, at spaces.
    expect(show('| name | note |\n|---|---|\n| Danube | flows through ten countries |', 20)).toMatch(/through/);
  });

  it('wide letters count two columns when wrapping', () => {
    for (const line of show('漢字 '.repeat(20), 11).trimEnd().split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(11);
  });
});
