/**
 * What the renderer takes on: a run nested deeper than MAX_DEPTH (lists, quotes) or longer than
 * MAX_RUN_CHARS is shown as the plain text it is. marked recurses once per level (`- ` a thousand
 * times overflows the stack) and its work grows faster than the text on deep lists (a 1.2 MB list
 * 400 deep: 15 s, 800 MB), as on emphasis opened hundreds deep (`*a ` × 500: seconds); below these
 * bounds a run renders in tens of milliseconds.
 */
export const MAX_DEPTH = 16;
export const MAX_RUN_CHARS = 32 * 1024;
export const MAX_RUN_LINES = 1000;

const FENCE = /^[ \t]*(`{3,}|~{3,})/;

/** The nesting a line opens: its list markers and quote marks, and its indentation (two columns a level). */
export function lineDepth(line: string): number {
  let depth = 0;
  let column = 0;
  let i = 0;
  for (; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ') column++;
    else if (c === '\t') column += 4 - (column % 4);
    else break;
  }
  depth += Math.floor(column / 2);
  while (i < line.length) {
    const c = line[i]!;
    let next: number;
    if (c === '>') next = i + 1;
    else if (c === '-' || c === '*' || c === '+') next = i + 1;
    else if (c >= '0' && c <= '9') {
      let j = i;
      while (j < line.length && j - i < 9 && line[j]! >= '0' && line[j]! <= '9') j++;
      if (line[j] !== '.' && line[j] !== ')') break;
      next = j + 1;
    } else break;
    const after = line[next];
    if (c !== '>' && after !== undefined && after !== ' ' && after !== '\t') break;
    depth++;
    i = next;
    while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
  }
  return depth;
}

const blank = (c: string | undefined) => c === undefined || c === ' ' || c === '\t' || c === '\n';

/**
 * How deep emphasis (`*`, `_`, `~`) is opened before it is closed: runs that open (a space before)
 * less those that close (a space after), from `depth` open before the line; the deepest, and what is open after it.
 */
export function emphasisDepth(line: string, open = 0): { most: number; depth: number } {
  let depth = open;
  let most = depth;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c !== '*' && c !== '_' && c !== '~') continue;
    let j = i;
    while (line[j + 1] === c) j++;
    const before = line[i - 1];
    const after = line[j + 1];
    if (blank(before) && !blank(after)) most = Math.max(most, ++depth);
    else if (!blank(before) && blank(after)) depth = Math.max(0, depth - 1);
    i = j;
  }
  return { most, depth };
}

/** Whether a run of Markdown is past what the renderer takes on (then it is shown as plain text). */
export function pastBounds(src: string): boolean {
  if (src.length > MAX_RUN_CHARS) return true;
  let fence: string | undefined;
  let lines = 0;
  let emphasis = 0;
  for (let pos = 0; pos < src.length; ) {
    if (++lines > MAX_RUN_LINES) return true;
    const nl = src.indexOf('\n', pos);
    const line = src.slice(pos, nl === -1 ? src.length : nl);
    pos = nl === -1 ? src.length : nl + 1;
    const mark = FENCE.exec(line)?.[1];
    if (fence) {
      if (mark && mark[0] === fence[0] && mark.length >= fence.length) fence = undefined;
      continue;
    }
    if (mark) fence = mark;
    else {
      if (lineDepth(line) > MAX_DEPTH) return true;
      // Emphasis goes on across the lines of a paragraph, and ends with it.
      const e = line.trim() === '' ? { most: 0, depth: 0 } : emphasisDepth(line, emphasis);
      if (e.most > MAX_DEPTH) return true;
      emphasis = e.depth;
    }
  }
  return false;
}
