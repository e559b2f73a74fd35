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

/**
 * The newest `limit` generations' contents, in at most about `budget` bytes, the oldest out first. Kept
 * in slots of arrays made once, written in turn: keeping one allocates nothing of its own (the
 * request's text is the one the request log keeps too). An object per content and a Map entry (its
 * table rebuilt now and then) were what every young collection copied, then promoted, at 500/s.
 * An id kept again is found as its newest keep; the older keep ages out as any other.
 */
export class KeptContents {
  private readonly ids: (string | null)[];
  private readonly workspaces: (string | null)[];
  private readonly asked: (string | null)[];
  private readonly completions: (string | null)[];
  private readonly reasonings: (string | null)[];
  private readonly failedBy: (string | null)[];
  private readonly sizes: Float64Array;
  /** The slot the next keep writes; the oldest is `count` slots before it. */
  private next = 0;
  private count = 0;
  private bytes = 0;

  constructor(private readonly limit: number, private readonly budget: number) {
    const slots = () => new Array<string | null>(limit).fill(null);
    [this.ids, this.workspaces, this.asked, this.completions, this.reasonings, this.failedBy] = [slots(), slots(), slots(), slots(), slots(), slots()];
    this.sizes = new Float64Array(limit);
  }

  /** Keeps `content` as `id`'s, `size` bytes of the budget; one larger than the whole budget is not kept. */
  keep(id: string, content: KeptContent, size: number): void {
    if (size > this.budget) return;
    if (this.count === this.limit) this.dropOldest();
    const i = this.next;
    this.ids[i] = id;
    this.workspaces[i] = content.workspace;
    this.asked[i] = content.asked;
    this.completions[i] = content.completion;
    this.reasonings[i] = content.reasoning;
    this.failedBy[i] = content.failedBy ?? null;
    this.sizes[i] = size;
    this.next = (i + 1) % this.limit;
    this.count++;
    this.bytes += size;
    while (this.bytes > this.budget) this.dropOldest();
  }

  /** The newest content kept as `id`'s. */
  get(id: string): KeptContent | undefined {
    for (let k = 1; k <= this.count; k++) {
      const i = (this.next - k + this.limit) % this.limit;
      if (this.ids[i] !== id) continue;
      return { workspace: this.workspaces[i]!, asked: this.asked[i]!, completion: this.completions[i]!, reasoning: this.reasonings[i]!, failedBy: this.failedBy[i] ?? undefined };
    }
    return undefined;
  }

  private dropOldest(): void {
    const i = (this.next - this.count + this.limit) % this.limit;
    this.ids[i] = this.workspaces[i] = this.asked[i] = this.completions[i] = this.reasonings[i] = this.failedBy[i] = null;
    this.bytes -= this.sizes[i]!;
    this.sizes[i] = 0;
    this.count--;
  }
}
