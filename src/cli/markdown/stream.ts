/**
 * Markdown rendered as it streams: the text is cut into runs of whole blocks at places no later text
 * can change (a blank line outside a code fence, before a line that starts a new block), each run is
 * rendered once, when its end is known, and the open block waits. A whole text is cut at the same
 * places however it arrives, so any split of it renders as the whole does (test/unit/markdown.test.ts).
 */

/** A line that starts a list item; and the beginnings that may still become one. */
const LIST_LINE = /^([-*+]|\d{1,9}[.)])([ \t]|$)/;
const LIST_SURE = /^([-*+]|\d{1,9}[.)])[ \t]/;
const LIST_MAYBE = /^([-*+]|\d{1,9}[.)]?)$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
/** A line longer than this decides nothing more until it ends. */
const LONG_LINE = 256;
/** HTML blocks that go on across blank lines (CommonMark's kinds 1 and 2), and what ends them. */
const RAW_HTML: [RegExp, RegExp][] = [
  [/^ {0,3}<(pre|script|style|textarea)([\s>]|$)/i, /<\/(pre|script|style|textarea)>/i],
  [/^ {0,3}<!--/, /-->/],
];

/** Whether the (maybe partial) line can start a new run after a blank line; undefined: not known yet. */
function startsRun(line: string, complete: boolean, runIsList: boolean): boolean | undefined {
  if (line.trim() === '') return complete ? false : undefined;
  // Indented: a list item's next paragraph, or indented code that joins what came before.
  if (/^[ \t]/.test(line)) return false;
  if (!runIsList) return true;
  // After a list, another item (of any list) is the same list, or loosens it: no cut.
  if (complete) return !LIST_LINE.test(line);
  if (LIST_SURE.test(line)) return false;
  return LIST_MAYBE.test(line) ? undefined : true;
}

/** Every place the text can be cut (ascending); `final`: no more text will come. */
export function findCuts(text: string, final: boolean): number[] {
  return new CutScanner().scan(text, final);
}

/**
 * findCuts read on as the text grows: each line is read once, however many pieces it comes in
 * (rescanning the open run at each piece made a long run cost its length squared). `rebase(n)`:
 * the text lost its first n characters (up to a cut).
 */
class CutScanner {
  private pos = 0;
  private fence: { ch: string; len: number } | undefined;
  private htmlEnd: RegExp | undefined;
  private runFirst: string | undefined;
  private afterBlank = false;

  /** How far the last scan read (whole lines), from the start of its text; the next scan starts over from there in its own text. */
  taken(): number {
    const n = this.pos;
    this.pos = 0;
    return n;
  }

  /** `base`: how much of the run came before `text` (a cut never falls at the run's start). */
  scan(text: string, final: boolean, base = 0): number[] {
    const cuts: number[] = [];
    while (this.pos < text.length) {
      const pos = this.pos;
      const nl = text.indexOf('\n', pos);
      const complete = nl >= 0 || final;
      const line = text.slice(pos, nl >= 0 ? nl : text.length).replace(/\r$/, '');
      if (this.afterBlank && !this.fence && !this.htmlEnd && base + pos > 0) {
        const ok = startsRun(line, complete, LIST_LINE.test(this.runFirst ?? ''));
        if (ok === undefined) break;
        if (ok) {
          cuts.push(pos);
          // A line not yet whole is read again once it is: the run it starts is known by then.
          this.runFirst = complete ? line : undefined;
          if (!complete) this.afterBlank = false;
        }
      }
      if (!complete) break;
      this.runFirst ??= line;
      this.read(line);
      this.pos = nl >= 0 ? nl + 1 : text.length;
    }
    return cuts;
  }

  /** One whole line: the fence or HTML block it opens or closes, and whether it is blank. */
  private read(line: string): void {
    if (this.fence) {
      const close = FENCE.exec(line);
      if (close && close[1]![0] === this.fence.ch && close[1]!.length >= this.fence.len && close[2]!.trim() === '') this.fence = undefined;
    } else if (this.htmlEnd) {
      if (this.htmlEnd.test(line)) this.htmlEnd = undefined;
    } else {
      const open = FENCE.exec(line);
      if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) this.fence = { ch: open[1]![0]!, len: open[1]!.length };
      const html = RAW_HTML.find(([start]) => start.test(line));
      if (html && !html[1].test(line.replace(html[0], ''))) this.htmlEnd = html[1];
    }
    this.afterBlank = !this.fence && line.trim() === '';
  }
}

/** Text in, rendered text out: whole runs of blocks as they close, a blank line between blocks. */
export class MarkdownStream {
  /** The open run's whole lines, read by the scanner (joined only when the run is cut), and its length. */
  private lines: string[] = [];
  private linesLength = 0;
  /** What follows them: the line not yet whole (read again as it grows, while short). */
  private tail = '';
  private started = false;
  private scanner = new CutScanner();

  /** `render`: one run of Markdown as the blocks it shows (read at each call: the width may change). */
  constructor(private readonly render: (src: string) => string[]) {}

  push(chunk: string): string {
    const waiting = this.tail.length;
    this.tail += chunk;
    // A long line only grows: nothing in it decides a cut before its end (adding to it stays linear).
    if (waiting > LONG_LINE && !chunk.includes('\n')) return '';
    return this.commit(this.scanner.scan(this.tail, false, this.linesLength));
  }

  /** The rest, once the answer is complete. */
  end(): string {
    const out = this.commit(this.scanner.scan(this.tail, true, this.linesLength));
    const rest = this.emit(this.lines.join('') + this.tail);
    this.lines = [];
    this.linesLength = 0;
    this.tail = '';
    this.scanner = new CutScanner();
    return out + rest;
  }

  /** Renders the runs before the cuts (offsets in the tail); the lines the scanner read join the open run. */
  private commit(cuts: number[]): string {
    let out = '';
    let from = 0;
    for (const cut of cuts) {
      out += this.emit((from === 0 ? this.lines.join('') : '') + this.tail.slice(from, cut));
      if (from === 0) {
        this.lines = [];
        this.linesLength = 0;
      }
      from = cut;
    }
    const read = this.scanner.taken();
    if (read > from) {
      this.lines.push(this.tail.slice(from, read));
      this.linesLength += read - from;
    }
    this.tail = this.tail.slice(Math.max(from, read));
    return out;
  }

  private emit(src: string): string {
    let out = '';
    for (const block of src.trim() ? this.render(src) : []) {
      out += `${this.started ? '\n' : ''}${block}\n`;
      this.started = true;
    }
    return out;
  }
}
