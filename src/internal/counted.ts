/** A whole number as a person reads it, thousands grouped: `grouped(3000)` is "3,000" (for messages, never for data). */
export function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * A count with its noun, singular for one: `counted(1, 'request')` is "1 request", `counted(3000, 'request')` "3,000 requests";
 * `counted(2, 'batch', 'batches')` for a noun whose plural is not its singular and an s.
 */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${grouped(n)} ${nounFor(n, noun, plural)}`;
}

/** The noun for a count, singular for one, where the count is written apart (`usage: 1 input token`, digits ungrouped). */
export function nounFor(n: number, noun: string, plural = `${noun}s`): string {
  return n === 1 ? noun : plural;
}
