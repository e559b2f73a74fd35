/** `bytes` cut at the given points (each taken modulo its length + 1), in order: the chunks a network might deliver. */
export function cutAt<B extends Uint8Array>(bytes: B, at: number[]): B[] {
  const points = [...new Set(at.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: B[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(from, p) as B);
    from = p;
  }
  return out;
}
