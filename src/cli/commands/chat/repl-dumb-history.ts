/**
 * Up, down and Backspace in TERM=dumb. node's readline then reads keys in a minimal mode (it looks at
 * process.env.TERM): no history, and Backspace's DEL typed into the line as text. Here up and down recall the lines
 * typed before, newest first, as they do on any other terminal; the line is drawn again with a carriage
 * return and spaces alone, which a dumb terminal has (no sequence that moves the cursor or clears). Other
 * keys that move the cursor (left, right, home…) are dropped rather than typed in. A line longer than the
 * terminal is wide is drawn from the start of its last row only.
 */
import type { Interface } from 'node:readline';
import type { Writable } from 'node:stream';

const DROPPED = new Set(['left', 'right', 'home', 'end', 'pageup', 'pagedown', 'insert', 'delete']);

type KeyHandler = (s: string | undefined, key: { name?: string; ctrl?: boolean; meta?: boolean } | undefined) => void;

/** Gives `rl` history and Backspace when readline is in its minimal mode; leaves it alone otherwise (and on a node whose readline differs). */
export function dumbHistory(rl: Interface, history: readonly string[], output: Writable): void {
  // Each key goes through rl._ttyWrite, which readline makes its own minimal one (a bound _ttyWriteDumb) in TERM=dumb.
  const keys = rl as unknown as { _ttyWrite?: KeyHandler };
  const minimal = Object.hasOwn(keys, '_ttyWrite') ? keys._ttyWrite : undefined;
  if (typeof minimal !== 'function' || !minimal.name.includes('Dumb')) return;
  const editable = rl as unknown as { line: string; cursor: number };
  let at = -1;
  let draft = '';
  const show = (next: string) => {
    const before = editable.line;
    editable.line = next;
    editable.cursor = next.length;
    const prompt = rl.getPrompt();
    output.write(`\r${prompt}${next}${' '.repeat(Math.max(0, before.length - next.length))}\r${prompt}${next}`);
  };
  keys._ttyWrite = (s, key) => {
    if (key?.name === 'up' && !key.ctrl && !key.meta) {
      if (at + 1 >= history.length) return;
      if (at === -1) draft = editable.line;
      show(history[++at]!);
      return;
    }
    if (key?.name === 'down' && !key.ctrl && !key.meta) {
      if (at === -1) return;
      at--;
      show(at === -1 ? draft : history[at]!);
      return;
    }
    // The minimal mode would type Backspace's DEL into the line.
    if (key?.name === 'backspace' && !key.ctrl && !key.meta) return show([...editable.line].slice(0, -1).join(''));
    if (key?.name && DROPPED.has(key.name)) return;
    if (key?.name === 'return' || key?.name === 'enter') at = -1;
    minimal(s, key);
  };
}
