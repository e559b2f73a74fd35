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

/**
 * Redacts a body read in pieces, with bounded memory: the last bytes of each piece that could begin a
 * secret are held back until the next piece (or the end) says whether they do.
 */
export class BytesRedactor {
  private held = Buffer.alloc(0);
  private readonly keep: number;

  constructor(private readonly secrets: readonly string[]) {
    this.keep = Math.max(0, ...secrets.map((s) => Buffer.byteLength(s) - 1));
  }

  /** What of `piece` (and what was held) can be shown now. */
  push(piece: Uint8Array): Buffer {
    const all = redactBytes(this.held.length ? Buffer.concat([this.held, piece]) : Buffer.from(piece), this.secrets);
    const cut = Math.max(0, all.length - this.keep);
    // Copied: a held tail must not keep a whole large piece alive.
    this.held = Buffer.from(all.subarray(cut));
    return all.subarray(0, cut);
  }

  /** What is left at the end of the body. */
  end(): Buffer {
    const rest = redactBytes(this.held, this.secrets);
    this.held = Buffer.alloc(0);
    return rest;
  }
}
