type Body = Record<string, unknown>;

/** A message's text: a string as it is, or the text of its content parts joined (other parts have none). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && typeof (part as Body).text === 'string' ? ((part as Body).text as string) : ''))
      .join('');
  }
  return '';
}
