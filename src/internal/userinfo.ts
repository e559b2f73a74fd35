/**
 * A URL as it may be shown: a user name and password in it replaced by ***. Everything up to the
 * last @ goes: a password typed with a /, ? or # in it (not percent-encoded) makes no URL, and shown
 * as it was given would be shown whole.
 */
export function withoutUserinfo(value: string): string {
  return value.replace(/^(\s*[a-z][a-z0-9+.-]*:\/*).*@/is, '$1***@');
}

/** A run of letters and digits as long as a key's: a key pasted where a URL goes (`--api-root "$ROUTER_API_KEY"`). */
const KEY_SHAPED = /(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{24,}/gi;

/**
 * A URL as a refusal may show it, which may hold a key wherever it was typed: the user name and password, the query
 * and the fragment left out (`?…`), and any run shaped like a key hidden (***).
 */
export function urlShown(value: string): string {
  return withoutUserinfo(value).replace(/([?#]).*$/s, '$1…').replace(KEY_SHAPED, '***');
}

/** Text with URLs in it (a role's front matter, a command line): each URL's user name and password replaced by ***. */
export function urlsWithoutUserinfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s@]*(?:@[^\s@]*)*@/gi, '$1***@');
}

/** A name whose value is a secret (a token, key, password, signature, session or authorization of any kind), of `word` characters. */
const secretName = (word: string) => String.raw`${word}*(?:token|secret|passw(?:or)?d|pwd|auth\w*|credential\w*|session\w*|signature|cookie)${word}*|${word}*(?:key|sig)`;

/**
 * Text as a setting or role may be shown (an API root; an mcp line, `npx mcp-remote https://u:p@host/sse --header
 * "Authorization: Bearer sk-…"`): the secret parts replaced by ***, the rest as it is so that it can be told apart.
 * Hidden: a URL's user name and password, the value of a query parameter, `NAME=value` or header (`Name: value`)
 * whose name says secret (token, key, password, auth…), and a query value that looks like a token (long, letters
 * and digits) under any name.
 */
export function secretsHidden(text: string): string {
  return urlsWithoutUserinfo(text)
    .replace(new RegExp(String.raw`(^|[\s?&;"'])(${secretName(String.raw`[\w.-]`)})=([^\s&#;"']+)`, 'gi'), '$1$2=***')
    .replace(/([?&][^=&#\s"']+=)(?=[^&#\s"']*\d)(?=[^&#\s"']*[a-z])[\w.~+/=-]{20,}/gi, '$1***')
    // A header is a word of a line (after another, or quoted): a line's first word and colon is a key (YAML's max_tokens:).
    .replace(new RegExp(String.raw`(?<=\S[ \t]+|["'])(${secretName(String.raw`[\w-]`)})(\s*:\s*)((?:bearer|basic|token)\s+)?[^\s"']+`, 'gi'), (_, name: string, colon: string, scheme?: string) => `${name}${colon}${scheme ?? ''}***`);
}
