/**
 * Switchable faults. A rule comes from the `x-router-fault` request header (that request only),
 * from `router serve --fault`, or from `POST /_emulator/faults` (server-wide, optionally `times`, `path` and `method`).
 *
 * Spec syntax: `KIND[,key=value...]`, e.g. `429,retry_after=1`, `503,times=2`, `slow,delay_ms=800`,
 * `503,provider=local-alpha` (that provider fails: the routing falls back),
 * `cut,after=3`, `error-chunk,after=2`, `malformed`, `reset`, and `lost` (the request is carried out
 * in full, then its answer is lost: the connection is reset instead), and `held` (carried out in full, its
 * answer never sent while the connection stays open: a client killed before it heard).
 */
export type FaultKind = 'status' | 'slow' | 'cut' | 'error-chunk' | 'malformed' | 'reset' | 'lost' | 'held';

export interface FaultRule {
  kind: FaultKind;
  status?: number;
  retryAfter?: string;
  delayMs?: number;
  /** For stream faults (cut, error-chunk, malformed): how many events (or KiB of audio, or of batch results) go out before the fault. */
  after?: number;
  /** How many requests the rule applies to; unlimited when absent. */
  times?: number;
  /** Only requests whose path contains this: the path under the API root (`/v1/chat/completions`), or the URL's (`/api/v1/…`). */
  path?: string;
  /** Only requests of this method (GET, POST, …). */
  method?: string;
  /**
   * A status fault of one provider (`503,provider=local-alpha`, of the fake models; `503,provider=openai`, of the
   * providers file: routing/provider-fault.ts): it fails unasked, and the request falls back to the next provider as a
   * gateway's does (unless `allow_fallbacks: false`).
   */
  provider?: string;
  /** Only requests of this workspace (rules set through the emulator route); all when absent. */
  workspace?: string;
}

export class FaultSpecError extends Error {}

/** A rule's path as under the API root, or as the URL has it (as the CLI's errors name a request: `POST /api/v1/…`). */
const onPath = (path: string, wanted: string) => path.includes(wanted) || `/api${path}`.includes(wanted);

/** A number of a fault's option: a whole number from `min` (NaN would make a rule that never ends or never waits). */
function whole(name: string, value: string, min: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new FaultSpecError(`${name} must be a whole number of at least ${min}, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** Retry-After as HTTP has it: seconds, or a date. */
function retryAfter(value: string): string {
  if (!/^\d+$/.test(value) && Number.isNaN(Date.parse(value))) throw new FaultSpecError(`retry_after must be seconds or an HTTP date, got ${JSON.stringify(value)}`);
  return value;
}

export function parseFault(spec: string): FaultRule {
  const [head, ...opts] = spec.split(',').map((s) => s.trim());
  let rule: FaultRule;
  if (head && /^[45]\d\d$/.test(head)) rule = { kind: 'status', status: Number(head) };
  else if (head === 'slow' || head === 'cut' || head === 'error-chunk' || head === 'malformed' || head === 'reset' || head === 'lost' || head === 'held') rule = { kind: head };
  else throw new FaultSpecError(`unknown fault "${head}": use a 4xx/5xx status, slow, cut, error-chunk, malformed, reset, lost or held`);
  for (const opt of opts) {
    const [k, v = ''] = opt.split('=');
    if (k === 'retry_after') rule.retryAfter = retryAfter(v);
    else if (k === 'delay_ms') rule.delayMs = whole(k, v, 0);
    else if (k === 'after') rule.after = whole(k, v, 0);
    else if (k === 'times') rule.times = whole(k, v, 1);
    else if (k === 'path') rule.path = v;
    else if (k === 'method') rule.method = v.toUpperCase();
    else if (k === 'provider' && v) rule.provider = v;
    else throw new FaultSpecError(`unknown fault option "${k}"`);
  }
  if (rule.provider !== undefined && rule.kind !== 'status') throw new FaultSpecError(`provider=${rule.provider} goes with a status fault only (e.g. 503,provider=${rule.provider})`);
  if (rule.kind === 'slow' && rule.delayMs === undefined) rule.delayMs = 1000;
  return rule;
}

export class FaultBoard {
  private rules: FaultRule[] = [];
  /** Header faults with `times`: how many uses each has left, by workspace and header text. */
  private readonly headerUses = new Map<string, number>();

  /** Replaces the rules of one workspace (or, with none, the server-wide ones). */
  set(rules: FaultRule[], workspace?: string): void {
    this.rules = [...this.rules.filter((r) => r.workspace !== workspace), ...rules.map((r) => ({ ...r, workspace }))];
  }

  list(workspace?: string): FaultRule[] {
    return workspace === undefined ? this.rules : this.rules.filter((r) => r.workspace === workspace);
  }

  /**
   * The fault for one request: the header's if any (with `times=N`, only the first N requests that
   * carry it, so a client's retries get through), else the first matching rule (consumed once).
   */
  take(path: string, header: string | undefined, workspace?: string, method = 'GET'): FaultRule | undefined {
    if (header) {
      const rule = parseFault(header);
      if (rule.times === undefined) return rule;
      const key = `${workspace ?? ''}|${header}`;
      const left = this.headerUses.get(key) ?? rule.times;
      if (left <= 0) return undefined;
      this.headerUses.set(key, left - 1);
      return rule;
    }
    const i = this.rules.findIndex((r) => (!r.path || onPath(path, r.path)) && (!r.method || r.method === method) && (r.workspace === undefined || r.workspace === workspace));
    if (i === -1) return undefined;
    const rule = this.rules[i]!;
    if (rule.times !== undefined) {
      rule.times -= 1;
      if (rule.times <= 0) this.rules.splice(i, 1);
    }
    return rule;
  }
}
