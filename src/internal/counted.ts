/** A count with its noun, singular for one: `counted(1, 'request')` is "1 request", `counted(2, 'request')` "2 requests". */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
