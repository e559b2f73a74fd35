const STARS = Buffer.from('****');

/** `bytes` with each secret's UTF-8 bytes replaced by `****`, found as bytes whatever the rest is. */
export function redactBytes(bytes: Buffer, secrets: readonly string[]): Buffer {
  let out = bytes;
  for (const s of secrets) {
    const secret = Buffer.from(s);
    if (out.indexOf(secret) < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = out.indexOf(secret); at >= 0; at = out.indexOf(secret, from)) {
      parts.push(out.subarray(from, at), STARS);
      from = at + secret.length;
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}
