/**
 * Styled text for a terminal: runs of text with SGR styles, measured by what a terminal shows
 * (wide letters two columns, marks none) and wrapped by words, each piece styled on its own so
 * that a wrapped line never carries a style into the next line or the prompt after the answer.
 */
import { eastAsianWidth } from 'get-east-asian-width';

export type Style = 'bold' | 'italic' | 'underline' | 'strike' | 'dim' | 'code' | 'link' | 'heading' | 'quote' | 'rule' | 'kw' | 'str' | 'num' | 'com' | 'fn' | 'type' | 'meta';

export interface Run {
  text: string;
  styles: readonly Style[];
}

const SGR: Record<Style, string> = {
  bold: '1',
  italic: '3',
  underline: '4',
  strike: '9',
  dim: '2',
  code: '33',
  link: '34;4',
  heading: '1;36',
  quote: '2',
  rule: '2',
  kw: '35',
  str: '32',
  num: '33',
  com: '2;3',
  fn: '34',
  type: '36',
  meta: '2',
};

/** A piece of text in its styles (nothing added without color). */
export function paint(text: string, styles: readonly Style[], color: boolean): string {
  if (!color || !styles.length || !text) return text;
  return `\x1b[${styles.map((s) => SGR[s]).join(';')}m${text}\x1b[0m`;
}

const PICTURE = /\p{Extended_Pictographic}/u;
const ZERO_WIDTH = /\p{Mn}|\p{Me}|[\u{e0000}-\u{e007f}]|[\u200b-\u200f\u2060]|[\ufe00-\ufe0f]/u;

/** Columns a text takes on a terminal (no escape sequences in it). */
export function textWidth(text: string): number {
  let w = 0;
  let joined = false;
  let picture = false;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    // A letter after a zero-width joiner joins the emoji before it (👨‍👩‍👧 is one picture, two columns); a skin
    // tone after an emoji colors it (👍🏽 is two columns, as most terminals and cli-table3's string-width show it).
    const zero = cp < 32 || joined || ZERO_WIDTH.test(ch) || (picture && cp >= 0x1f3fb && cp <= 0x1f3ff);
    joined = cp === 0x200d;
    picture = PICTURE.test(ch);
    if (!zero) w += eastAsianWidth(cp);
  }
  return w;
}

export const runsWidth = (runs: readonly Run[]) => runs.reduce((w, r) => w + textWidth(r.text), 0);
/** A line of runs painted, neighbours in the same styles as one piece. */
export function paintRuns(runs: readonly Run[], color: boolean): string {
  let out = '';
  for (let i = 0; i < runs.length; ) {
    let text = runs[i]!.text;
    const key = runs[i]!.styles.join();
    let j = i + 1;
    for (; j < runs.length && runs[j]!.styles.join() === key; j++) text += runs[j]!.text;
    out += paint(text, runs[i]!.styles, color);
    i = j;
  }
  return out;
}

/** Splits a text into pieces of at most `width` columns (a word longer than a line). */
function hardSplit(text: string, width: number): string[] {
  const out: string[] = [];
  let cur = '';
  let w = 0;
  for (const ch of text) {
    const cw = textWidth(ch);
    if (w + cw > width && cur) {
      out.push(cur);
      cur = '';
      w = 0;
    }
    cur += ch;
    w += cw;
  }
  if (cur) out.push(cur);
  return out;
}

/**
 * Runs wrapped to `width` columns: lines of runs. Spaces and soft line breaks between words become
 * one space; a "\n" run is a hard break.
 */
export function wrapRuns(runs: readonly Run[], width: number): Run[][] {
  const w = Math.max(1, width);
  const lines: Run[][] = [[]];
  let lineWidth = 0;
  let space: Run | undefined;
  const put = (r: Run) => {
    lines[lines.length - 1]!.push(r);
    lineWidth += textWidth(r.text);
  };
  const newLine = () => {
    lines.push([]);
    lineWidth = 0;
    space = undefined;
  };
  for (const run of runs) {
    if (run.text === '\n') {
      newLine();
      continue;
    }
    for (const part of run.text.split(/([ \t\n]+)/)) {
      if (!part) continue;
      if (/^[ \t\n]+$/.test(part)) {
        if (lineWidth > 0) space = { text: ' ', styles: run.styles };
        continue;
      }
      const pw = textWidth(part);
      const sw = space ? 1 : 0;
      if (lineWidth > 0 && lineWidth + sw + pw > w) newLine();
      else if (space) put(space);
      space = undefined;
      if (pw <= w - lineWidth) put({ text: part, styles: run.styles });
      else {
        const pieces = hardSplit(part, w);
        pieces.forEach((p, i) => {
          if (i > 0) newLine();
          put({ text: p, styles: run.styles });
        });
      }
    }
  }
  return lines;
}
