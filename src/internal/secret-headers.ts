/**
 * The one rule of which HTTP headers carry a credential, so are never shown or kept (the
 * emulator's request log, a cassette's headers): Authorization and Proxy-Authorization, cookies both
 * ways, and any name with a key, token, secret, password or credential in it (`x-api-key`,
 * `api-key`, `x-goog-api-key`, `x-auth-token`, `x-amz-security-token`, …).
 */
const SECRET = /auth|cookie|key|token|secret|passw|credential|signature/i;

/** Names seen, each to whether it is secret: one test per name, not per request. */
const seen = new Map<string, boolean>();

/** Whether a header of this name (any case) carries a credential. */
export function isSecretHeader(name: string): boolean {
  let secret = seen.get(name);
  if (secret === undefined) {
    secret = SECRET.test(name);
    if (seen.size < 1024) seen.set(name, secret);
  }
  return secret;
}
