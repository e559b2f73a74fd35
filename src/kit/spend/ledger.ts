/**
 * The local usage ledger: one JSON line per call the CLI (or a program through the kit) makes, in $XDG_STATE_HOME/router/usage.jsonl.
 * Each record is one append (O_APPEND, one write), so concurrent `router` processes never mix lines.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stateHome } from '../../config/state-dir.js';
import { appendWhole } from '../../internal/append-whole.js';
import { makeDir } from '../../internal/make-dir.js';
import { describeCode } from '../../internal/system-errors.js';

export interface UsageRecord {
  /** ISO 8601, UTC. */
  time: string;
  profile: string;
  command: string;
  endpoint: string;
  model?: string | undefined;
  /** The answer's id (generation, response, decision); for batches the batch id. */
  id?: string | undefined;
  batch_id?: string | undefined;
  prompt_tokens?: number | undefined;
  completion_tokens?: number | undefined;
  total_tokens?: number | undefined;
  /** As the service reports it (speech: its generation's); absent where it said none (a call cut before its cost came). */
  cost?: number | undefined;
  /** The API root the call went to, without credentials: `usage --reconcile` asks that service only. */
  api_root?: string | undefined;
  /** Set where `cost` is the call's bound, its cost not known when it ended (a cut, a kill): why. */
  unsettled?: string | undefined;
  /** SHA-256 of the key the call was sent with (as the keys API names it), where known. */
  key_hash?: string | undefined;
  /** A call counted at its bound before its answer named it (`held-…`): it was sent after this time and before `sent_before`. */
  sent_after?: string | undefined;
  sent_before?: string | undefined;
}

export function ledgerPath(env: NodeJS.ProcessEnv): string {
  return join(stateHome(env), 'usage.jsonl');
}

/** Where a batch's hold on the budgets is kept (budget-hold.ts) until its cost is in the ledger. */
export function batchHoldPath(env: NodeJS.ProcessEnv, batchId: string): string {
  return join(stateHome(env), 'budget-holds', `batch-${batchId.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
}

/** Appends one record; a ledger that cannot be written never fails the call it records. */
export function appendUsage(env: NodeJS.ProcessEnv, record: UsageRecord): string | undefined {
  let path = 'usage.jsonl';
  try {
    // Inside: a state folder that cannot be named (no home at all) is a ledger that cannot be written.
    path = ledgerPath(env);
    makeDir(dirname(path));
    appendWhole(path, `${JSON.stringify(record)}\n`, 0o600, true);
    // A batch's cost is known once it is recorded ended: its hold on the budgets has done its work.
    if (record.batch_id && typeof record.cost === 'number') rmSync(batchHoldPath(env, record.batch_id), { force: true });
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `the usage ledger ${path} could not be written (${code ? describeCode(code) : (err as Error).message})`;
  }
}

/** Tokens and cost from an answer's `usage`, whichever names it uses. */
export function usageFields(u: Record<string, unknown> | null | undefined): Pick<UsageRecord, 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'cost'> {
  if (!u) return {};
  const num = (...keys: string[]) => keys.map((k) => u[k]).find((v): v is number => typeof v === 'number');
  const prompt = num('prompt_tokens', 'input_tokens');
  const completion = num('completion_tokens', 'output_tokens');
  const total = num('total_tokens') ?? (prompt !== undefined || completion !== undefined ? (prompt ?? 0) + (completion ?? 0) : undefined);
  const out: ReturnType<typeof usageFields> = {};
  if (prompt !== undefined) out.prompt_tokens = prompt;
  if (completion !== undefined) out.completion_tokens = completion;
  if (total !== undefined) out.total_tokens = total;
  const cost = num('cost');
  if (cost !== undefined) out.cost = cost;
  return out;
}
