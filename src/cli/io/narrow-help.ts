/**
 * Help on a narrow terminal: where an option's description would get fewer columns than help wraps
 * to (commander then leaves it one long line, broken mid-word by the terminal), it goes under its
 * term instead, wrapped to the whole width.
 */
import { Help } from '../commander.js';

/** Under its term, a description is indented this much. */
const UNDER = 6;

/** Text wrapped at spaces to `width` columns (a longer word alone on its line), whatever the width. */
export function wrapped(text: string, width: number): string {
  return Object.assign(new Help(), { minWidthToWrap: 1 }).boxWrap(text, Math.max(width, 1));
}

/** A term and its description: side by side where the description has room, else the description under the term. */
export function termAndDescription(term: string, termWidth: number, description: string, width: number, minRoom: number): string {
  const room = width - termWidth;
  if (room >= minRoom) return term.padEnd(termWidth) + wrapped(description, room).replaceAll('\n', `\n${' '.repeat(termWidth)}`);
  return `${term.trimEnd()}\n${' '.repeat(UNDER)}${wrapped(description, width - UNDER).replaceAll('\n', `\n${' '.repeat(UNDER)}`)}`;
}

/** configureHelp's formatItem: commander's, but a description with too little room beside its term goes under it. */
export const narrowItems: Partial<Help> = {
  formatItem: function (this: Help, term, termWidth, description, helper) {
    const itemIndent = 2;
    const room = (this.helpWidth ?? 80) - termWidth - 2 - itemIndent;
    if (!description || room >= this.minWidthToWrap || helper.preformatted(description)) {
      return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
    }
    const width = (this.helpWidth ?? 80) - itemIndent;
    return ' '.repeat(itemIndent) + termAndDescription(term, termWidth + 2, description, width, Infinity).replaceAll('\n', `\n${' '.repeat(itemIndent)}`);
  },
};
