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
  const cuts: number[] = [];
  let fence: { ch: string; len: number } | undefined;
  let htmlEnd: RegExp | undefined;
  let runFirst: string | undefined;
  let afterBlank = false;
  for (let pos = 0; pos < text.length; ) {
    const nl = text.indexOf('\n', pos);
    const complete = nl >= 0 || final;
    const line = text.slice(pos, nl >= 0 ? nl : text.length).replace(/\r$/, '');
    if (afterBlank && !fence && !htmlEnd && pos > 0) {
      const ok = startsRun(line, complete, LIST_LINE.test(runFirst ?? ''));
      if (ok === undefined) break;
      if (ok) {
        cuts.push(pos);
        runFirst = line;
      }
    }
    if (!complete) break;
    runFirst ??= line;
    if (fence) {
      const close = FENCE.exec(line);
      if (close && close[1]![0] === fence.ch && close[1]!.length >= fence.len && close[2]!.trim() === '') fence = undefined;
    } else if (htmlEnd) {
      if (htmlEnd.test(line)) htmlEnd = undefined;
    } else {
      const open = FENCE.exec(line);
      if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) fence = { ch: open[1]![0]!, len: open[1]!.length };
      const html = RAW_HTML.find(([start]) => start.test(line));
      if (html && !html[1].test(line.replace(html[0], ''))) htmlEnd = html[1];
    }
    afterBlank = !fence && line.trim() === '';
    pos = nl >= 0 ? nl + 1 : text.length;
  }
  return cuts;
}

/** Text in, rendered text out: whole runs of blocks as they close, a blank line between blocks. */
export class MarkdownStream {
  private pending = '';
  private started = false;

  /** `render`: one run of Markdown as the blocks it shows (read at each call: the width may change). */
  constructor(private readonly render: (src: string) => string[]) {}

  push(chunk: string): string {
    this.pending += chunk;
    return this.commit(findCuts(this.pending, false));
  }

  /** The rest, once the answer is complete. */
  end(): string {
    const out = this.commit(findCuts(this.pending, true));
    const rest = this.emit(this.pending);
    this.pending = '';
    return out + rest;
  }

  private commit(cuts: number[]): string {
    let out = '';
    let from = 0;
    for (const cut of cuts) {
      out += this.emit(this.pending.slice(from, cut));
      from = cut;
    }
    this.pending = this.pending.slice(from);
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
