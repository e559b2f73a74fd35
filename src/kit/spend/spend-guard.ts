/**
 * The spend guard, before a call is sent: its cost bound from the model list's prices, its
 * completion limit lowered to fit the cap (a max cost, what is left of the budgets), or the call
 * refused with a typed error (./errors.ts) and nothing sent. The cap is read in ./spend-cap.ts. Under a
 * budget the check and the hold on it are made under the budgets' lock (./check-under-lock.ts), so concurrent processes never let go
 * together more than a budget has left. A further call of the same work (a tool loop's next round)
 * is held to what is left once the earlier calls' cost is taken off.
 */
import { checkedOptions, PROGRAM_WORDS, type Checked, type SpendGuardOptions, type SpendWords } from './spend-guard-options.js';
import type { BudgetHold, Held } from './budget-hold.js';
import { capOf, HeldBack, spentOff } from './spend-cap.js';
import { checkUnderLock } from './check-under-lock.js';
import { imagesUnbounded, worstBound, type Pricing } from './cost-bound.js';
import { describeLimit, fitting, sizeOf, type SpendCall, type Cap } from './fit.js';
import { CostCapExceeded, CostUnbounded } from './errors.js';
import type { UsageRecord } from './ledger.js';
import { Underway } from './underway.js';
import { abandonCalls, appendOf, recordingOf, recordLate, withdraw } from './abandoned-calls.js';

export type { SpendCall, Cap };

export { HeldBack } from './spend-cap.js';
export { PROGRAM_WORDS, type Checked, type SpendEvents, type SpendGuardOptions, type SpendWords } from './spend-guard-options.js';

/** A bound at the kept prices this near the cap (a share of it) is checked again at fresh prices. */
const NEAR_LINE = 0.5;

export class SpendGuard {
  // Private (#), as its options: a program that logs its guard (util.inspect, a logger's JSON) never prints its environment.
  readonly #env: NodeJS.ProcessEnv;
  readonly words: SpendWords;
  private first?: Checked | undefined;
  private firstCheck?: Promise<Checked> | undefined;
  /** Calls checked and not yet answered: concurrent calls of one guard are held to the cap together. */
  private readonly underway = new Underway();
  /** What the calls checked so far cost (their reported cost, else their bound). */
  spent = 0;
  /** release() was called while calls of the guard were under way: the hold goes once the last ends. */
  private releaseWanted = false;

  readonly #opts: SpendGuardOptions;

  constructor(opts: SpendGuardOptions) {
    this.#opts = opts;
    this.#env = checkedOptions(opts).env ?? process.env;
    this.words = opts.words ?? PROGRAM_WORDS;
  }

  /** The options it was made with (its `env` among them: private, as `env`). */
  get opts(): SpendGuardOptions {
    return this.#opts;
  }

  /** Where the ledger and holds live (`ROUTER_STATE_DIR`, …). */
  get env(): NodeJS.ProcessEnv {
    return this.#env;
  }

  /** Whether the calls hold what they may cost against the budgets while they run. */
  get holds(): boolean {
    const b = this.opts.budgets;
    return !!b && (b.dailyBudget !== undefined || b.monthlyBudget !== undefined) && !this.opts.estimate && !this.opts.ignoreBudget && this.opts.recorded !== false;
  }

  /** What the work holds of the budgets, if anything. */
  get hold(): BudgetHold | undefined {
    return this.first?.hold;
  }

  /**
   * A call's usage once it is answered (`call`: the one checked, else one not known ends): counted against the cap and, where calls are recorded,
   * put in the usage ledger (one whole line appended), which lessens the hold by its cost. Returns why the ledger could not be written, if not.
   */
  record(entry: Omit<UsageRecord, 'time' | 'profile'>, call?: SpendCall): string | undefined {
    const ended = this.underway.settle(call);
    if (ended?.abandoned) return this.endedOne(recordLate(this, entry, ended));
    // Under a budget an answer that said no cost (a stream cut) may still have been charged: its bound counts until reconciled.
    if (this.hold) entry = this.hold.priced(entry);
    this.paid(entry.cost);
    const problem = recordingOf(this) ? appendOf(this, entry) : undefined;
    // The hold covers the calls still under way; with none, what this one did not cost is kept for the work's next call.
    if (!problem && this.underway.count) this.hold?.set(this.underway.total);
    else if (!problem) this.hold?.spent(entry.cost);
    this.endedOne();
    return problem;
  }

  /**
   * A checked call failed with `err` before its usage was recorded (`call`: the one checked, else one not known). Where
   * the service may have carried it out (`maybeDelivered`: its answer lost, cut or timed out) or the guard's signal
   * stopped it, its bound counts against the cap and, under a budget, goes to the ledger (`unsettled`), as the CLI counts it.
   */
  failed(err: unknown, call?: SpendCall): void {
    const stopped = !!this.opts.signal?.aborted;
    // Which call failed is not known: it may have cost the largest bound, and the hold keeps the rest beside it.
    const most = this.underway.largest;
    const ended = this.underway.settle(call);
    const delivered = stopped || (err as { maybeDelivered?: unknown } | undefined)?.maybeDelivered === true;
    // Counted at its bound by abandon(): it stays so where it may have been charged, and is taken back where it was not.
    if (ended?.abandoned) withdraw(this, ended, !delivered);
    else if (delivered) {
      const { hold } = this;
      const counted = !hold?.live ? this.first?.bound !== undefined : this.underway.count ? hold.countUnknownOf(call && ended ? ended.bound : most, this.underway.total) : hold.failed(err, stopped);
      if (counted) this.paid(undefined);
    } else if (this.hold?.live && this.underway.count) this.hold.set(this.underway.total);
    this.endedOne();
  }

  /** A checked call (`call`, else one not known) was not sent after all (the work stopped first): it is no longer under way, and costs nothing. */
  unsent(call?: SpendCall): void {
    const ended = this.underway.settle(call);
    if (ended?.abandoned) withdraw(this, ended);
    else if (this.hold?.live && this.underway.count) this.hold.set(this.underway.total);
    this.endedOne();
  }

  /**
   * Ends every call checked and not yet ended (a send that threw unsaid, or one still running) as failed() ends one that may have been
   * carried out: at its bound, in `spent` and, under a budget, the ledger (`unsettled`); else they stay held for the guard's life. One that
   * ends after all (record, failed, unsent) is counted once, at what it cost (./abandoned-calls.ts). Returns how many.
   */
  abandon(): number {
    const lost = this.underway.abandon();
    abandonCalls(this, lost);
    this.endedOne();
    return lost.length;
  }

  /** Ends the work: what it holds of the budgets is let go, once no call of the guard is under way (a pool of prompts ends one by one). */
  release(): void {
    this.releaseWanted = true;
    this.endedOne();
  }

  /** A call ended (`out`: what its ending returns). */
  private endedOne<T>(out?: T): T | undefined {
    if (!this.releaseWanted || this.underway.count) return out;
    this.releaseWanted = false;
    this.first?.hold?.release();
    return out;
  }

  /**
   * Checks a call; may lower its completion limit in `call.body`. The first call is held to the whole cap, each later
   * one to what is left of it once `spent` and the bounds of calls under way (checked, not yet recorded or failed) are
   * taken off; one that fits as it is only once those end waits for them.
   */
  async check(call: SpendCall): Promise<Checked> {
    if (!this.firstCheck) {
      this.firstCheck = this.holds ? this.underLock((held) => this.once(call, held), undefined, call.models.find((m) => !!m)) : this.once(call);
      this.firstCheck.catch(() => (this.firstCheck = undefined));
      this.first = await this.firstCheck;
      this.underway.add(this.first.bound, call);
      return this.first;
    }
    const first = await this.firstCheck;
    // A call that fits as it is only once calls under way end waits for them, rather than be cut to fit beside them.
    for (let said = false; this.crowded(first, call); said = true) {
      if (!said) this.opts.on?.waiting?.(`calls of this guard under way: beside them this call would pass ${first.cap!.name}`);
      await this.underway.ended(this.opts.signal);
    }
    this.underway.add(await this.next(first, call, this.spent + this.underway.total, this.underway), call);
    return first;
  }

  /** Whether calls under way leave the cap too little for this call as it is. */
  private crowded(first: Checked, call: SpendCall): boolean {
    const { cap, prices } = first;
    return !!this.underway.count && !!cap && !!prices && worstBound(prices, sizeOf(call)).bound > cap.usd - this.spent - this.underway.total;
  }

  /** Counts what a checked call cost (undefined: its bound, the most it could have). */
  paid(cost: number | undefined): void {
    this.spent += typeof cost === 'number' && Number.isFinite(cost) ? cost : (this.first?.bound ?? 0);
  }

  /**
   * A further call, held to what is left of the first check's cap once `spent` is taken off; resolves with its bound.
   * Under a budget, the calls `beside` it (this guard's under way) are held with it, in one hold.
   */
  async next(checked: Checked, call: SpendCall, spent: number, beside?: { total: number; count: number }): Promise<number | undefined> {
    const { cap, prices } = checked;
    if (!cap || !prices) return undefined;
    let bound: number | undefined;
    const again = async (held?: Held) => {
      // Under a budget the ledger has the earlier calls by now: the budgets are read again, beside the holds of other calls and this guard's calls under way.
      if (held && beside?.count) held = { ...held, usd: held.usd + beside.total, calls: held.calls + beside.count };
      const left = held ? (await this.cap(held, spent))! : { usd: cap.usd - spent, name: `${cap.name}, ${spentOff(this.words, spent)}` };
      this.fit(call, prices, left);
      checked.bound = bound = worstBound(prices, sizeOf(call)).bound;
      return checked;
    };
    // A hold released (the work ended, then went on) is placed anew.
    await (checked.hold ? this.underLock(again, checked.hold.live ? checked.hold : undefined, undefined, beside?.total) : again());
    return bound;
  }

  private async once(call: SpendCall, held?: Held): Promise<Checked> {
    const cap = await this.cap(held);
    if (!cap && !this.opts.estimate) return {};
    const ids = [...new Set(call.models.filter((id): id is string => !!id))];
    const read = (refresh: boolean) => this.pricesOrWhy(cap, () => (ids.length ? this.opts.prices(ids, refresh) : Promise.resolve('no model is named (the service would choose one)')));
    let got = call.unboundable ?? (await read(false));
    // The kept model list may be minutes old: a decision near the line is made on prices read afresh.
    if (cap && typeof got !== 'string' && worstBound(got, sizeOf(call)).bound >= cap.usd * NEAR_LINE) got = await read(true);
    const prices = typeof got === 'string' ? got : (imagesUnbounded(call.body, got) ?? got);
    if (typeof prices === 'string') {
      if (cap) throw new CostUnbounded(`cannot bound the cost of this call for ${cap.name}: ${prices}`, prices);
      return { unknown: prices };
    }
    if (cap) this.fit(call, prices, cap);
    const size = sizeOf(call);
    const { bound, model } = worstBound(prices, size);
    return { bound, boundModel: model, size, completionMost: describeLimit(prices, size), ...(cap ? { cap, prices } : {}) };
  }

  /** The lowest of the max cost (less what the work already `spent`) and what is left of each budget beside what calls under way hold (./spend-cap.ts). */
  cap(held?: Held, spent = 0): Promise<Cap | undefined> {
    return capOf(this, held, spent);
  }

  /** The prices, or why there are none. A model list that cannot be read (the network, a refused key) fails a capped call with that failure; a bound without a cap says it is unknown. */
  async pricesOrWhy(cap: Cap | undefined, read: () => Promise<Pricing[] | string>): Promise<Pricing[] | string> {
    try {
      return await read();
    } catch (err) {
      if (cap || this.opts.signal?.aborted) throw err;
      return `the model list could not be read (${(err as Error).message})`;
    }
  }

  /** Checks under the budgets' lock, beside what calls under way (in any process) hold, and holds the bound until its cost is in the ledger (./check-under-lock.ts). */
  private underLock(attempt: (held: Held) => Promise<Checked>, hold?: BudgetHold, model?: string, beside = 0): Promise<Checked> {
    return checkUnderLock(this, attempt, hold, model, beside);
  }

  /** Lowers the completion limit to what the cap allows, or refuses the call (it waits where calls under way hold what it needs). */
  private fit(call: SpendCall, prices: Pricing[], cap: Cap): void {
    const fit = fitting(call, prices, cap);
    if (typeof fit === 'string') {
      const free = cap.held ? fitting(call, prices, { ...cap, usd: cap.usd + cap.held }) : fit;
      throw typeof free === 'string' ? new CostCapExceeded(fit, worstBound(prices, sizeOf(call)).bound, { usd: cap.usd, name: cap.name }) : new HeldBack(fit);
    }
    if (fit === undefined) return;
    call.body[call.limitField!] = fit;
    this.opts.on?.lowered?.(fit, cap);
  }
}
