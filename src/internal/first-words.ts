/**
 * `text`'s words with one space between, in at most `max` characters; cut, it ends in "…" (counted in `max`, never
 * after half an emoji), so that a title or a summary shows it was cut. What `text.replace(/\s+/g, ' ').trim()` gives,
 * read no further than those words: that replace copies the whole text, with a part per match on the way (a 20 MB
 * prompt took ~370 MB more to title its conversation).
 */
export function firstWords(text: string, max: number): string {
  const word = /\S+/g;
  let out = '';
  for (let m; out.length <= max && (m = word.exec(text)); ) out += (out ? ' ' : '') + m[0].slice(0, max + 1);
  return cutText(out, max);
}

/**
 * `text` as it is in at most `max` characters; longer, its start and "…" (counted in `max`, never after half an
 * emoji): a quote of a server's or a tool's words (an error body, a tool's description) shows it was cut.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, Math.max(0, max - 1)).replace(/[\uD800-\uDBFF]$/, '').trimEnd();
  return `${head}…`;
}
