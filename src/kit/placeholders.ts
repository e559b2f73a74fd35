/**
 * Placeholders of a saved prompt (llm's template variables, Python's string.Template): `$name` or
 * `${name}` is a value given by name, `$$` a literal `$`; a `$` before anything else stays as it is.
 * `$input` is the user's prompt.
 */
import { PlaceholderError } from './errors.js';

export { PlaceholderError };

const PLACEHOLDER = /\$(?:\$|([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})/g;

/** The names the texts' placeholders use, each once, in order. */
export function placeholderNames(...texts: (string | undefined)[]): string[] {
  const names = new Set<string>();
  for (const text of texts) for (const m of (text ?? '').matchAll(PLACEHOLDER)) if (m[1] ?? m[2]) names.add((m[1] ?? m[2])!);
  return [...names];
}

/** The text with each placeholder given its value; a PlaceholderError names every one without a value. */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  const missing = placeholderNames(text).filter((n) => !Object.hasOwn(values, n));
  if (missing.length) throw new PlaceholderError(missing);
  return text.replace(PLACEHOLDER, (_, a: string | undefined, b: string | undefined) => (a ?? b ? values[(a ?? b)!]! : '$'));
}

/**
 * A saved prompt's texts filled (llm's template evaluation): its system text and its prompt text, with
 * `values` over `o.defaults` and `input` as `$input`; `o.of` names what holds them in the error (a role). Without a prompt text the input is the prompt, as it
 * is (never read for placeholders). Every missing value of both texts is named in one PlaceholderError.
 */
export function fillPrompt(texts: { system?: string | undefined; prompt?: string | undefined }, input: string | undefined, values: Readonly<Record<string, string>>, o: { defaults?: Readonly<Record<string, string>> | undefined; of?: string | undefined } = {}): { system?: string | undefined; prompt?: string | undefined } {
  const all: Record<string, string> = { ...o.defaults, ...values, ...(input === undefined ? {} : { input }) };
  const missing = placeholderNames(texts.system, texts.prompt).filter((n) => !Object.hasOwn(all, n));
  if (missing.length) throw new PlaceholderError(missing, o.of);
  return {
    ...(texts.system === undefined ? {} : { system: fillPlaceholders(texts.system, all) }),
    prompt: texts.prompt === undefined ? input : fillPlaceholders(texts.prompt, all),
  };
}
