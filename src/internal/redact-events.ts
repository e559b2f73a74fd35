import { redactValue } from './hide-secrets.js';
import { TextRedactor } from './redact-text.js';
import type { MarkedKeys } from './key-marks.js';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text part an event's `delta` belongs to, and its `.done`: the kind (`response.output_text`) and where it stands. */
const partOf = (kind: string, ev: Rec) => [kind, ev.item_id, ev.output_index, ev.content_index, ev.summary_index].map(String).join('\0');

/**
 * Redacts streamed Responses events printed one JSON line each (`responses --json`), a secret split across two
 * events' `delta` too. Each event is printed as it came, with its own `sequence_number`; only its text may change:
 * the end of a delta that could begin a secret moves to the part's next delta. The event it was cut from waits
 * until that next delta (or the part's `.done`, which gives it back what was held, hidden as a cut key's start)
 * comes, and the events after it wait behind it, in order: no more than a secret's length less one is held.
 */
export class EventRedactor {
  private readonly parts = new Map<string, TextRedactor>();
  /** Per part, the event printed with what its delta let go, waiting to be given the held end if no delta follows. */
  private readonly waiting = new Map<string, Rec>();
  private readonly queue: unknown[] = [];

  constructor(
    private readonly secrets: readonly string[],
    private readonly marked?: MarkedKeys,
  ) {}

  /** The events that can be printed now (none, while one waits), in order, every secret in them hidden. */
  push(ev: unknown): unknown[] {
    if (!this.secrets.length && !this.marked?.marks.length) return [ev];
    const type = isRec(ev) && typeof ev.type === 'string' ? ev.type : '';
    if (isRec(ev) && type.endsWith('.delta') && typeof ev.delta === 'string') {
      const part = partOf(type.slice(0, -'.delta'.length), ev);
      const hide = this.parts.get(part) ?? new TextRedactor(this.secrets, this.marked);
      this.parts.set(part, hide);
      const shown = { ...ev, delta: hide.push(ev.delta) };
      this.waiting.delete(part);
      if (hide.holding) this.waiting.set(part, shown);
      this.queue.push(shown);
    } else {
      this.marked?.learn(JSON.stringify(ev) ?? '');
      if (isRec(ev) && type.endsWith('.done')) this.endPart(partOf(type.slice(0, -'.done'.length), ev));
      this.queue.push(ev);
    }
    const waits = new Set(this.waiting.values());
    let ready = 0;
    while (ready < this.queue.length && !waits.has(this.queue[ready] as Rec)) ready++;
    return this.queue.splice(0, ready).map((e) => redactValue(e, this.secrets));
  }

  /** Every event still waiting (a stream that ended, or broke, before its parts' `.done`), given what was held. */
  end(): unknown[] {
    for (const part of [...this.parts.keys()]) this.endPart(part);
    return this.queue.splice(0).map((e) => redactValue(e, this.secrets));
  }

  private endPart(part: string): void {
    const rest = this.parts.get(part)?.end() ?? '';
    const ev = this.waiting.get(part);
    if (ev) ev.delta = `${ev.delta as string}${rest}`;
    this.parts.delete(part);
    this.waiting.delete(part);
  }
}
