/** `router api` under a budget: its calls are held to no budget and go to no usage ledger, so a paid one is refused unless --ignore-budget. */
import { sourceName, type Settings } from '../../config/settings.js';
import { CliError, EXIT } from '../exit-codes.js';

/** The POSTs that spend: a call of these through router api would spend beside the budgets, unseen by them and by router usage. */
const PAID = /(?:^|\/)(?:v1\/(?:chat\/completions|completions|responses|embeddings|audio\/speech|batches|messages|audio\/transcriptions|images|rerank)|alpha\/decisions)\/?$/i;
/** The paid routes of the official OpenAPI that no command of router's sends (router serve serves none of them). */
const NO_COMMAND = /(?:^|\/)v1\/(?:audio\/transcriptions|images|rerank)\/?$/i;

/** A POST to `path` under daily_budget or monthly_budget that would spend: refused (exit 4), nothing sent. */
export function refuseUnderBudget(settings: Settings, path: string): void {
  // As a server may read it: a fragment is never sent, and doubled slashes or capitals may be taken as one; an API root
  // without /api leaves it (or any other start) to the path.
  const route = path.replace(/[?#].*$/s, '').replace(/\/{2,}/g, '/');
  if (!PAID.test(route)) return;
  const budget = settings.dailyBudget?.trim() ? (['daily_budget', settings.from.dailyBudget] as const) : settings.monthlyBudget?.trim() ? (['monthly_budget', settings.from.monthlyBudget] as const) : undefined;
  if (!budget) return;
  const [name, from] = budget;
  throw new CliError(`router api is not held to ${name}${from ? ` (${sourceName(from)})` : ''}, nor is what it spends in the usage ledger: POST ${path} was not sent; ${NO_COMMAND.test(route) ? 'pass --ignore-budget to send it anyway' : 'use the command for it (chat, responses, embed, speak, decide, batch create), or pass --ignore-budget'}`, EXIT.PAYMENT);
}
