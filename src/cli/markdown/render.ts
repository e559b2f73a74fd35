/**
 * Markdown blocks as a terminal shows them: marked's tokens (its lexer parses) drawn by us, wrapped
 * to the width, styled only with color. Each block is its own lines; the caller puts a blank line
 * between blocks.
 */
import { createRequire } from 'node:module';
import { highlightLines } from './highlight.js';
import { pastBounds } from './bounds.js';
import { paint, paintRuns, runsWidth, textWidth, wrapRuns, type Run, type Style } from './runs.js';

// marked's token shapes, as far as this file reads them.
interface Token {
  type: string;
  raw: string;
  text?: string;
  tokens?: Token[];
  depth?: number;
  lang?: string;
  href?: string;
  ordered?: boolean;
  start?: number | '';
  loose?: boolean;
  items?: Token[];
  task?: boolean;
  checked?: boolean;
  header?: { tokens: Token[] }[];
  rows?: { tokens: Token[] }[][];
  align?: ('left' | 'right' | 'center' | null)[];
}

export interface RenderOptions {
  width: number;
  color: boolean;
}

let lexer: ((src: string) => Token[]) | undefined;

/** marked's lexer, loaded from node_modules on first use (never part of the CLI bundle). */
function lex(src: string): Token[] {
  if (!lexer) {
    const { Lexer } = createRequire(import.meta.url)('marked') as { Lexer: { lex(src: string, o: object): Token[] } };
    lexer = (s) => Lexer.lex(s, { gfm: true });
  }
  return lexer(src);
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };
const decode = (s: string) => s.replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_, e: string) => ENTITY[e]!);

/** Inline tokens as styled runs. */
function inline(tokens: Token[] | undefined, styles: Style[] = []): Run[] {
  const runs: Run[] = [];
  for (const t of tokens ?? []) {
    const add = (text: string, more: Style[] = []) => runs.push({ text, styles: [...styles, ...more] });
    switch (t.type) {
      case 'strong':
        runs.push(...inline(t.tokens, [...styles, 'bold']));
        break;
      case 'em':
        runs.push(...inline(t.tokens, [...styles, 'italic']));
        break;
      case 'del':
        runs.push(...inline(t.tokens, [...styles, 'strike']));
        break;
      case 'codespan':
        add(decode(t.text ?? ''), ['code']);
        break;
      case 'br':
        runs.push({ text: '\n', styles: [] });
        break;
      case 'link': {
        const label = inline(t.tokens, [...styles, 'link']);
        runs.push(...label);
        const shown = label.map((r) => r.text).join('');
        if (t.href && shown !== t.href && `mailto:${shown}` !== t.href) add(` (${t.href})`, ['dim']);
        break;
      }
      case 'image':
        add(`[image: ${t.text || t.href}]`, ['dim']);
        break;
      case 'checkbox':
        add(t.checked ? '[x] ' : '[ ] ');
        break;
      case 'text':
        if (t.tokens) runs.push(...inline(t.tokens, styles));
        else add(decode(t.text ?? ''));
        break;
      default:
        add(decode(t.text ?? t.raw));
    }
  }
  return runs;
}

const lines = (runs: Run[][], o: RenderOptions, first = '', rest = first) => runs.map((l, i) => `${i ? rest : first}${paintRuns(l, o.color)}`.trimEnd());

/** One block token as text lines (no trailing newline); undefined for what shows nothing. */
function block(t: Token, o: RenderOptions): string | undefined {
  const width = Math.max(10, o.width);
  switch (t.type) {
    case 'space':
    case 'def':
      return undefined;
    case 'heading': {
      const marks: Run = { text: `${'#'.repeat(t.depth ?? 1)} `, styles: ['heading'] };
      const runs = inline(t.tokens, ['heading']);
      return lines(wrapRuns([marks, ...runs], width), o).join('\n');
    }
    case 'paragraph':
    case 'text':
      return lines(wrapRuns(t.tokens ? inline(t.tokens) : [{ text: decode(t.text ?? ''), styles: [] }], width), o).join('\n');
    case 'code': {
      const fence = t.raw.trimStart().startsWith('~') ? '~~~' : '```';
      const body = highlightLines(t.text ?? '', t.lang ?? '', o.color).map((l) => paintRuns(l, o.color));
      return [paint(`${fence}${t.lang ?? ''}`, ['dim'], o.color), ...body, paint(fence, ['dim'], o.color)].join('\n');
    }
    case 'blockquote': {
      const inner = blocks(t.tokens ?? [], { ...o, width: width - 2 }).join('\n\n');
      return inner.split('\n').map((l) => `${paint('│', ['quote'], o.color)} ${l}`.trimEnd()).join('\n');
    }
    case 'list':
      return list(t, o, width);
    case 'hr':
      return paint('─'.repeat(Math.min(width, 80)), ['rule'], o.color);
    case 'table':
      return table(t, o, width);
    default:
      return (t.text ?? t.raw).replace(/\n+$/, '');
  }
}

function list(t: Token, o: RenderOptions, width: number): string {
  const start = typeof t.start === 'number' ? t.start : 1;
  const items = t.items ?? [];
  const markers = items.map((_, i) => (t.ordered ? `${start + i}. ` : '• '));
  const pad = Math.max(...markers.map((m) => m.length));
  const out = items.map((item, i) => {
    const inner = blocks(item.tokens ?? [], { ...o, width: width - pad });
    const [first = '', ...rest] = inner.join(item.loose ? '\n\n' : '\n').split('\n');
    const marker = paint(markers[i]!.padEnd(pad), ['bold'], o.color);
    return [`${marker}${first}`.trimEnd(), ...rest.map((l) => (l ? `${' '.repeat(pad)}${l}` : l))].join('\n');
  });
  return out.join(t.loose ? '\n\n' : '\n');
}

function table(t: Token, o: RenderOptions, width: number): string {
  const head = (t.header ?? []).map((c) => inline(c.tokens, ['bold']));
  const rows = (t.rows ?? []).map((r) => r.map((c) => inline(c.tokens)));
  const n = head.length;
  const natural = Array.from({ length: n }, (_, c) => Math.max(1, runsWidth(head[c]!), ...rows.map((r) => runsWidth(r[c] ?? []))));
  // Columns shrink, the widest first, until the table fits its width (" │ " between columns), each no
  // narrower than its longest word (a word cut in two reads as two values: "value1" "0"), up to 20.
  const least = Array.from({ length: n }, (_, c) => Math.min(natural[c]!, Math.max(3, Math.min(20, longestWord([head[c]!, ...rows.map((r) => r[c] ?? [])])))));
  const cols = [...natural];
  const room = width - 3 * (n - 1);
  const shrinkable = () => cols.reduce((best, w, c) => (w > least[c]! && (best === -1 || w > cols[best]!) ? c : best), -1);
  for (let c = shrinkable(); cols.reduce((a, b) => a + b, 0) > room && c !== -1; c = shrinkable()) cols[c]!--;
  // Too many columns for the window even when narrow: each row as "heading: value" lines instead.
  if (cols.reduce((a, b) => a + b, 0) > room) return records(head, rows, o, width);
  const sep = paint(' │ ', ['dim'], o.color);
  const row = (cells: Run[][]) => {
    const wrapped = cols.map((w, c) => wrapRuns(cells[c] ?? [], w));
    const height = Math.max(...wrapped.map((w) => w.length));
    return Array.from({ length: height }, (_, i) =>
      cols
        .map((w, c) => {
          const l = wrapped[c]![i] ?? [];
          const gap = ' '.repeat(Math.max(0, w - runsWidth(l)));
          const align = t.align?.[c];
          const text = paintRuns(l, o.color);
          if (align === 'right') return gap + text;
          if (align === 'center') return gap.slice(0, gap.length >> 1) + text + gap.slice(gap.length >> 1);
          return text + gap;
        })
        .join(sep)
        .trimEnd(),
    ).join('\n');
  };
  const rule = paint(cols.map((w) => '─'.repeat(w)).join('─┼─'), ['dim'], o.color);
  return [row(head), rule, ...rows.map(row)].join('\n');
}

/** The widest word of the cells, in columns. */
function longestWord(cells: Run[][]): number {
  return Math.max(0, ...cells.flatMap((runs) => runs.map((r) => r.text).join('').split(/\s+/).map(textWidth)));
}

/** Block tokens as rendered blocks. */
function blocks(tokens: Token[], o: RenderOptions): string[] {
  return tokens.map((t) => block(t, o)).filter((b): b is string => b !== undefined);
}

/**
 * One segment of Markdown (a run of whole blocks) as the blocks a terminal shows; past the bounds
 * of the renderer (bounds.ts), or should it fail anyway, the text as it is.
 */
export function renderBlocks(src: string, o: RenderOptions): string[] {
  const plain = [src.replace(/\n+$/, '')];
  if (pastBounds(src)) return plain;
  try {
    return blocks(lex(src), o);
  } catch {
    return plain;
  }
}

/** A table as records: a line per cell ("heading: value", wrapped to the width), a blank line between rows. */
function records(head: Run[][], rows: Run[][][], o: RenderOptions, width: number): string {
  const lines = (runs: Run[]) => wrapRuns(runs, width).map((l) => paintRuns(l, o.color).trimEnd());
  if (!rows.length) return head.flatMap(lines).join('\n');
  return rows
    .map((r) => head.flatMap((h, c) => lines([...h, { text: ': ', styles: ['bold'] }, ...(r[c] ?? [])])).join('\n'))
    .join('\n\n');
}
