/** A URL as it may be shown: a user name and password in it replaced by ***. */
export function withoutUserinfo(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/*)[^/?#]*@/i, '$1***@');
}
