import { ByteRing } from './byte-ring.js';
import { textHash } from './text-hash.js';

/** One generation's content as kept: the request as its JSON text, the answer's text, who broke it. */
export interface KeptContent {
  workspace: string;
  /** The request body's JSON text, as it came (parsed again only when the content is asked for). */
  asked: string;
  completion: string | null;
  reasoning: string | null;
  /** The provider that broke the answer mid-stream, if one did. */
  failedBy: string | undefined;
}

/** A content to keep: the request body's bytes as they came, or its JSON text. */
export type ContentToKeep = Omit<KeptContent, 'asked'> & { asked: Uint8Array | string };

/**
 * The newest `limit` generations' contents, in at most about `budget` bytes, the oldest out first. Kept
 * in slots of arrays made once, written in turn, the id, the request and the answer's text as bytes in
 * one ring (byte-ring.ts): keeping one leaves no object on V8's heap. The strings kept per content (an id,
 * the answer's text, the request's text) were what every young collection copied, then promoted, at
 * 500/s. The workspace and the provider are strings the key and the providers file keep anyway.
 * An id kept again is found as its newest keep; the older keep ages out as any other.
 */
export class KeptContents {
  private readonly bytes = new ByteRing();
  private readonly hashes: Int32Array;
  private readonly workspaces: (string | null)[];
  private readonly failedBy: (string | null)[];
  /** Where each piece begins in the ring (the id's first: the others follow it), and its length in bytes (-1: null). */
  private readonly idAt: Float64Array;
  private readonly idLength: Int32Array;
  private readonly askedAt: Float64Array;
  private readonly askedLength: Int32Array;
  private readonly completionAt: Float64Array;
  private readonly completionLength: Int32Array;
  private readonly reasoningAt: Float64Array;
  private readonly reasoningLength: Int32Array;
  private readonly sizes: Float64Array;
  /** The slot the next keep writes; the oldest is `count` slots before it. */
  private next = 0;
  private count = 0;
  private size = 0;

  constructor(private readonly limit: number, private readonly budget: number) {
    const slots = () => new Array<string | null>(limit).fill(null);
    [this.workspaces, this.failedBy] = [slots(), slots()];
    [this.idAt, this.askedAt, this.completionAt, this.reasoningAt, this.sizes] = [0, 0, 0, 0, 0].map(() => new Float64Array(limit));
    [this.hashes, this.idLength, this.askedLength, this.completionLength, this.reasoningLength] = [0, 0, 0, 0, 0].map(() => new Int32Array(limit));
  }

  /** Keeps `content` as `id`'s, `size` bytes of the budget; one larger than the whole budget is not kept. */
  keep(id: string, content: ContentToKeep, size: number): void {
    if (size > this.budget) return;
    if (this.count === this.limit) this.dropOldest();
    const i = this.next;
    this.hashes[i] = textHash(id);
    [this.idAt[i], this.idLength[i]] = this.put(id);
    [this.askedAt[i], this.askedLength[i]] = typeof content.asked === 'string' ? this.put(content.asked) : [this.bytes.putBytes(content.asked), content.asked.length];
    [this.completionAt[i], this.completionLength[i]] = this.put(content.completion);
    [this.reasoningAt[i], this.reasoningLength[i]] = this.put(content.reasoning);
    this.workspaces[i] = content.workspace;
    this.failedBy[i] = content.failedBy ?? null;
    this.sizes[i] = size;
    this.next = (i + 1) % this.limit;
    this.count++;
    this.size += size;
    while (this.size > this.budget) this.dropOldest();
  }

  /** The newest content kept as `id`'s. */
  get(id: string): KeptContent | undefined {
    const hash = textHash(id);
    for (let k = 1; k <= this.count; k++) {
      const i = (this.next - k + this.limit) % this.limit;
      if (this.hashes[i] !== hash || this.text(this.idAt[i]!, this.idLength[i]!) !== id) continue;
      return {
        workspace: this.workspaces[i]!,
        asked: this.text(this.askedAt[i]!, this.askedLength[i]!)!,
        completion: this.text(this.completionAt[i]!, this.completionLength[i]!),
        reasoning: this.text(this.reasoningAt[i]!, this.reasoningLength[i]!),
        failedBy: this.failedBy[i] ?? undefined,
      };
    }
    return undefined;
  }

  /** A text kept in the ring: where it begins and its length in bytes (-1 for null). */
  private put(text: string | null): [number, number] {
    if (text === null) return [0, -1];
    const length = Buffer.byteLength(text);
    return [this.bytes.put(text, length), length];
  }

  private text(at: number, length: number): string | null {
    return length < 0 ? null : this.bytes.text(at, length);
  }

  private dropOldest(): void {
    const i = (this.next - this.count + this.limit) % this.limit;
    this.workspaces[i] = this.failedBy[i] = null;
    this.size -= this.sizes[i]!;
    this.sizes[i] = 0;
    this.count--;
    if (this.count) this.bytes.release(this.idAt[(i + 1) % this.limit]!);
    else this.bytes.clear();
  }
}
