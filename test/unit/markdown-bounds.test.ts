import { describe, expect, it } from 'vitest';
import { renderBlocks } from '../../src/cli/markdown/render.js';
import { renderPieces, terminalMarkdown } from '../../src/cli/markdown/index.js';
import { MarkdownStream } from '../../src/cli/markdown/stream.js';
import type { IO } from '../../src/cli/io/io.js';

// Markdown cannot crash or hang the renderer: nesting past the bound, or a run past its size, shows
// as the plain text it is; Ctrl-C while rendering ends the answer. (Before: `- ` × 1000 overflowed
// the stack, and a 1.2 MB list 400 deep took 15 s and 824 MB.)
const o = { width: 80, color: false };
const whole = (src: string, pieces = 0) => {
  const md = new MarkdownStream((s) => renderBlocks(s, o));
  let out = '';
  if (pieces) for (let i = 0; i < src.length; i += pieces) out += md.push(src.slice(i, i + pieces));
  else out += md.push(src);
  return out + md.end();
};

/** A list of about `bytes` characters whose items go `depth` levels deep and back. */
function deepList(bytes: number, depth: number): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${'  '.repeat(i % depth)}- item ${i}\n`;
  return s;
}

describe('the Markdown renderer past its bounds', () => {
  it('`- ` a thousand times then a word: the text, no stack overflow', () => {
    const src = `${'- '.repeat(1000)}word\n`;
    expect(whole(src)).toBe(src);
  });

  it('the same deep in a quote, in numbered items, and in emphasis', () => {
    for (const src of [`${'> '.repeat(5000)}word\n`, `${'1. '.repeat(3000)}word\n`, `${'- > '.repeat(2000)}word\n`]) expect(whole(src)).toBe(src);
    // Emphasis opened hundreds deep (marked took seconds), on one line or across a paragraph's.
    for (const src of [`${'*a '.repeat(5000)}b${' c*'.repeat(5000)}\n`, `${'**a\n'.repeat(500)}b${' c**'.repeat(500)}\n`]) expect(whole(src)).toBe(src);
  });

  it('a run past 1,000 lines or 32 KiB: plain text', () => {
    const flat = '- item\n'.repeat(1001);
    expect(whole(flat)).toBe(flat);
    expect(whole('- item\n'.repeat(999))).not.toContain('- item');
  });

  it('a 1.2 MB list 400 deep, whole or in 7-character pieces: shown as plain text, every line', () => {
    const src = deepList(1_200_000, 400);
    expect(whole(src)).toBe(src);
    expect(whole(src, 7)).toBe(src);
  });

  it('within the bounds, lists and quotes still render', () => {
    expect(whole('- one\n  - two\n    - three\n\n> quoted\n')).toBe('• one\n  • two\n    • three\n\n│ quoted\n');
    const nested = deepList(2_000, 12);
    expect(whole(nested)).not.toContain('- item');
  });

  it('fenced code indented deep is no nesting', () => {
    expect(whole(`\`\`\`js\n${' '.repeat(80)}x();\n\`\`\`\n`)).toContain(`${' '.repeat(80)}x();`);
  });
});

describe('Ctrl-C while rendering', () => {
  it('ends the rendering with the interrupt (exit 130), though every piece had arrived', async () => {
    const stop = new AbortController();
    const io = { columns: 80, color: false, interrupt: stop.signal } as unknown as IO;
    async function* pieces() {
      yield '- one\n\n';
      // Ctrl-C arrives while the pieces already received are rendered.
      stop.abort(Object.assign(new Error('interrupted'), { name: 'AbortError' }));
      yield '- two\n\n';
    }
    const seen: string[] = [];
    const run = (async () => {
      for await (const out of renderPieces(io, pieces())) seen.push(out);
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('without Ctrl-C, every piece is rendered', async () => {
    const io = { columns: 80, color: false } as unknown as IO;
    async function* pieces() {
      yield '- one\n\n';
      yield 'two\n';
    }
    let out = '';
    for await (const piece of renderPieces(io, pieces())) out += piece;
    expect(out).toBe('• one\n\ntwo\n');
    expect(terminalMarkdown(io)).toBeDefined();
  });
});
