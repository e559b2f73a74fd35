/** Conversations of `router chat` (-c, --conversation, and -i started from one). */
import type { ChatMessage } from '../../../client/types.js';
import { usage } from '../../exit-codes.js';
import { ConversationError } from '../../../kit/errors.js';
import { checkConversationId, findConversationIds, lastConversation, loadConversation, nearConversation, newConversation, saveConversation, type Conversation } from '../../saved/conversations.js';
import type { RunContext } from '../../run.js';
import type { Command } from '../../commander.js';
import { describeSystemError, isSystemError } from '../../../internal/system-errors.js';
import type { ChatOptions } from './flags.js';

/** The conversation -c or --conversation takes up (undefined: a new one, or a named one not yet saved). */
export async function openConversation(ctx: RunContext<ChatOptions>): Promise<Conversation | undefined> {
  const { opts, env } = ctx;
  if (opts.continue && opts.conversation) throw usage('give one of -c/--continue and --conversation ID');
  // As `llm -c`: with no conversation yet, -c starts one.
  if (opts.continue) return lastConversation(env) ?? undefined;
  if (opts.conversation === undefined) return undefined;
  try {
    return loadConversation(env, checkConversationId(opts.conversation));
  } catch (err) {
    if (!(err instanceof ConversationError && err.code === 'not_found')) throw err;
    // A name that is none yet starts a conversation; one close to a kept one is likely a typo, said.
    const near = await nearConversation(env, opts.conversation);
    if (near) ctx.io.note(`note: no conversation ${opts.conversation} yet: this starts it${near}`);
    return undefined;
  }
}

/**
 * `-c -abc` is -c, then -abc read as flags (-a bc): -c takes no id. So is `-qc -abc` (-c among switches
 * run together). When a kept conversation is named exactly that word, the id was meant: refused,
 * naming the form that takes it.
 */
export function checkContinueId(ctx: RunContext<ChatOptions>): void {
  if (!ctx.opts.continue) return;
  const at = continueWords(ctx.cmd, ctx.argv);
  const kept = at.length ? findConversationIds(ctx.env) : [];
  for (const i of at) {
    const [given, next] = [ctx.argv[i]!, ctx.argv[i + 1]];
    if (!next || !/^-[^-]/.test(next) || !kept.includes(next)) continue;
    const flag = given === '--continue' || given === '-c' ? given : `-c (in ${given})`;
    throw usage(`${flag} continues the last conversation and takes no id: ${next} reads as flags; to go on with conversation ${next}, give --conversation ${next}`);
  }
}

/** Where -c is in `argv`: as -c or --continue, or among short switches run together (-qc); never a flag's value. */
function continueWords(cmd: Command, argv: readonly string[]): number[] {
  const options = [...cmd.options, ...(cmd.parent?.options ?? [])];
  const find = (flag: string) => options.find((o) => o.short === flag || o.long === flag);
  const isSwitch = (flag: string) => {
    const o = find(flag);
    return o !== undefined && !o.required && !o.optional;
  };
  const found: number[] = [];
  for (let i = 0; i < argv.length && argv[i] !== '--'; i++) {
    const a = argv[i]!;
    if (a === '--continue' || (/^-[a-zA-Z]+$/.test(a) && a.includes('c') && [...a.slice(1)].every((l) => isSwitch(`-${l}`)))) found.push(i);
    // A flag that takes a value, given apart, takes the next word: -s -c is a system message "-c".
    else if (/^-[a-zA-Z]$|^--[^=]+$/.test(a) && find(a)?.required) i++;
  }
  return found;
}

/** -s replaces the conversation's system message (or starts it). */
export { withSystem } from '../../../kit/messages.js';

/** Whose run was already told that logging is off (a REPL says it once, not every turn). */
const toldNotKept = new WeakSet<object>();

/**
 * Saves the turn (unless --no-log or the settings turn logging off). The answer was delivered (and
 * paid for) before: a turn that cannot be kept is a warning, like a ledger line, never a failed call.
 * `answeredBy`: the model that answered, kept when none was named (`conversations list` shows it).
 */
export function keepConversation(ctx: RunContext<ChatOptions>, earlier: Conversation | undefined, model: string | undefined, messages: ChatMessage[], answer: string, prompt: string, answeredBy?: string): Conversation | undefined {
  if (!ctx.logging) {
    // Asked for by name or with -c, yet nothing is kept: said, so that the next -c is no surprise.
    if ((ctx.opts.continue || ctx.opts.conversation) && !toldNotKept.has(ctx.io)) {
      toldNotKept.add(ctx.io);
      ctx.io.note(`warning: this turn was not kept in conversation ${earlier?.id ?? ctx.opts.conversation} (logging is off: --no-log, ROUTER_NO_LOG or the profile's log setting)`);
    }
    return earlier;
  }
  const reply: ChatMessage = { role: 'assistant', content: answer };
  const c = { ...(earlier ?? { ...newConversation(model, prompt), ...(ctx.opts.conversation ? { id: ctx.opts.conversation } : {}) }) };
  c.messages = [...messages, reply];
  if (model) {
    c.model = model;
    delete c.answered_by;
  } else if (answeredBy) c.answered_by = answeredBy;
  try {
    return saveConversation(ctx.env, c, earlier, [messages[messages.length - 1]!, reply]);
  } catch (err) {
    const why = isSystemError(err) ? describeSystemError(err) : (err as Error).message;
    const line = `warning: this turn was not kept in conversation ${c.id} (${why})`;
    // Asked for by name or with -c: said even off a terminal.
    if (ctx.opts.continue || ctx.opts.conversation) ctx.io.note(line);
    else ctx.io.info(line);
  }
  return c;
}
