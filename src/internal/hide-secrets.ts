/** `text` with each secret replaced by `****` (whole secrets only). */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s && out.includes(s)) out = out.split(s).join('****');
  return out;
}

/** The part of a secret that, left in a text cut short (a quoted snippet, a line cut at its width), still gives too much of it away. */
const PREFIX_CHARS = 16;

/**
 * `text` with each secret shown as `****`: whole, and where a cut left only its start (16 characters or more of a
 * secret longer than 20), that start too.
 */
export function hideSecrets(text: string, secrets: readonly string[]): string {
  let out = redactText(text, secrets);
  for (const s of secrets) {
    if (s.length <= 20 || !out.includes(s.slice(0, PREFIX_CHARS))) continue;
    for (let n = s.length - 1; n >= PREFIX_CHARS; n--) out = out.split(s.slice(0, n)).join('****');
  }
  return out;
}
