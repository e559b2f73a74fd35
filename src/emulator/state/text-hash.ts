/** A string's hash (FNV-1a over its UTF-16 units): an id is looked for among those kept by it first, then by its text. */
export function textHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h | 0;
}
