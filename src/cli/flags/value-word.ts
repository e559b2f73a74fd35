/**
 * Whether the word after `word` is the value of a global flag: `-p` (`-p work`), or a cluster of short
 * flags whose first one that takes a value is its last letter (`-qp work`; `-pq` is -p with the value "q").
 */
export function takesNextWord(word: string, withValue: ReadonlySet<string>): boolean {
  if (withValue.has(word)) return true;
  if (!/^-[^-]{2,}$/.test(word)) return false;
  const first = [...word.slice(1)].findIndex((letter) => withValue.has(`-${letter}`));
  return first === word.length - 2;
}
