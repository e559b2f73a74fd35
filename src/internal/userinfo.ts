/**
 * A URL as it may be shown: a user name and password in it replaced by ***. Everything up to the
 * last @ goes: a password typed with a /, ? or # in it (not percent-encoded) makes no URL, and shown
 * as it was given would be shown whole.
 */
export function withoutUserinfo(value: string): string {
  return value.replace(/^(\s*[a-z][a-z0-9+.-]*:\/*).*@/is, '$1***@');
}

/** Text with URLs in it (a role's front matter, a command line): each URL's user name and password replaced by ***. */
export function urlsWithoutUserinfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s@]*(?:@[^\s@]*)*@/gi, '$1***@');
}
