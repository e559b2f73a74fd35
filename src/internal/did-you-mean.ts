/** Edit distance (insertions, deletions, substitutions, and a swap of neighbours as one edit: "modle" is one from "model"). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

const MAX_WORD = 100;

/**
 * The candidate a mistyped word most likely meant, at most `maxDistance` edits away: by default
 * about one edit per three letters ("huge" is another word, not a typo of "high").
 */
export function closest(word: string, candidates: readonly string[], maxDistance = Math.max(1, Math.floor(word.length / 3))): string | undefined {
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  // Its cost grows with the product of the lengths: a pasted paragraph is no typo of a name.
  if (word.length > MAX_WORD) return undefined;
  // Of two as close, the one that starts as the word does: "fsh" is fish, not zsh.
  const firstLetter = (c: string) => c[0]?.toLowerCase() === word[0]?.toLowerCase();
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - word.length) > maxDistance) continue;
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance || (best !== undefined && distance === bestDistance && firstLetter(candidate) && !firstLetter(best))) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** " (did you mean X?)" when a close candidate exists, else nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closest(word, candidates);
  return match && match !== word ? ` (did you mean ${match}?)` : '';
}
