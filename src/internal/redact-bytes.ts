import { markedKeysIn, markedStart, type KeyMark } from './key-marks.js';
import { withJsonForms } from './hide-secrets.js';

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
  private keep: number;
  private readonly secrets: string[];

  /** `marks`: keys kept in the keychain, known by their marks (a key is ASCII: found in the bytes read as Latin-1). */
  constructor(secrets: readonly string[], private readonly marks: readonly KeyMark[] = []) {
    this.secrets = [...secrets];
    this.keep = Math.max(0, ...secrets.map((s) => Buffer.byteLength(s) - 1));
  }

  /** What of `piece` (and what was held) can be shown now. */
  push(piece: Uint8Array): Buffer {
    let all: Buffer = this.held.length ? Buffer.concat([this.held, piece]) : Buffer.from(piece);
    const text = this.marks.length ? all.toString('latin1') : '';
    for (const key of this.marks.length ? markedKeysIn(text, this.marks) : []) {
      for (const form of withJsonForms([key])) if (!this.secrets.includes(form)) this.secrets.push(form);
      this.keep = Math.max(this.keep, key.length - 1);
    }
    all = redactBytes(all, this.secrets);
    const cut = Math.max(0, all.length - Math.max(this.keep, this.marks.length ? markedStart(all.toString('latin1'), this.marks) : 0));
    // Copied: a held tail must not keep a whole large piece alive.
    this.held = Buffer.from(all.subarray(cut));
    return all.subarray(0, cut);
  }

  /** What is left at the end of the body. */
  end(): Buffer {
    const found = this.marks.length ? markedKeysIn(this.held.toString('latin1'), this.marks) : [];
    const rest = redactBytes(this.held, [...this.secrets, ...withJsonForms(found)]);
    this.held = Buffer.alloc(0);
    return rest;
  }
}
