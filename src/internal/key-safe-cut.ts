/**
 * Cuts of a text that may hold a key, made where no key can stand: at white space (no key holds any). A cut inside a
 * key would leave a piece of it that hiding no longer knows as the key's (its end, where a window began in it; a start
 * shorter than hideSecrets takes for one): the word the cut fell in is left out whole.
 */

const SPACE = /\s/;

/** The last `max` characters of `text` at most, from a word's start: a word whose start fell before them is left out. */
export function lastWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const from = text.length - max;
  if (SPACE.test(text[from - 1]!)) return text.slice(from);
  const space = text.slice(from).search(SPACE);
  return space < 0 ? '' : text.slice(from + space + 1);
}

/** The first `max` characters of `text` at most, up to a word's end: a word whose end fell after them is left out. */
export function firstWholeWords(text: string, max: number): string {
  if (text.length <= max || SPACE.test(text[max]!)) return text.slice(0, max);
  const head = text.slice(0, max);
  const space = head.search(/\s\S*$/);
  return space < 0 ? '' : head.slice(0, space);
}
