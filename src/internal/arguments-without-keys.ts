/**
 * A tool call's arguments with the keys given hidden (`****`), before a tool or an MCP server sees them: a model that read a
 * key in the prompt may write it into a call (docs/keys.md). JSON arguments are hidden value by value, then written again
 * (a key holding `"` or `\` is found as it is, not as JSON escapes it); other text as it came, the keys' JSON forms too.
 */
import { hideable, hideSecrets, redactValue, withJsonForms } from './hide-secrets.js';

/** The arguments with `keys` hidden; undefined when they hold none (they are then passed on as the model wrote them). */
export function argumentsWithoutKeys(text: string, keys: readonly string[]): string | undefined {
  const secrets = [...new Set(keys.filter(hideable))];
  if (!secrets.length) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const hidden = hideSecrets(text, withJsonForms(secrets));
    return hidden === text ? undefined : hidden;
  }
  const hidden = redactValue(value, secrets);
  return hidden === value ? undefined : JSON.stringify(hidden);
}

/** Every string of a JSON value (its objects' keys too), one a line: where a key found by its mark may stand. */
export function stringsOf(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x);
      }
    }
  };
  walk(value);
  return out.join('\n');
}
