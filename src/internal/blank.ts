/**
 * A path or setting that is empty or only spaces: never meant as a name (an unset or mistyped
 * shell variable), so it is refused, or taken as unset, rather than made into a file called " ".
 */
export function isBlank(value: string | undefined): value is undefined | '' {
  return value === undefined || value.trim() === '';
}

/** No byte but spaces, tabs and line ends (nothing at all too); looks no further than the first other byte. */
export function onlyBlanks(text: string | Uint8Array): boolean {
  for (const b of typeof text === 'string' ? Buffer.from(text) : text) if (b !== 32 && (b < 9 || b > 13)) return false;
  return true;
}

/**
 * What input with nothing to read held, as a refusal says it: "stdin was empty", "stdin held only
 * blank lines" (or "only spaces"); `file`: "FILE is empty", "FILE holds only blank lines".
 */
export function blankInput(text: string | Uint8Array, file?: string): string {
  const held = text.length === 0 ? undefined : (typeof text === 'string' ? /[\n\r]/.test(text) : text.includes(10) || text.includes(13)) ? 'blank lines' : 'spaces';
  if (file === undefined) return held ? `stdin held only ${held}` : 'stdin was empty';
  return held ? `${file} holds only ${held}` : `${file} is empty`;
}
