/**
 * chat -i's fragments: --sf opens the session's system message; -f and `/fragment SOURCE` go before the next
 * message sent, once (as -a and /attach do); each kept once the turn that sent it was answered.
 */
import type { ChatMessage } from '../../../client/types.js';
import type { Fragment } from '../../../kit/fragments.js';
import { FragmentStore } from '../../../kit/fragments.js';
import { fragmentFrom, fragmentedPrompt, keepFragments, keptWithFragments, readFragments, type ReadFragments } from '../../answers/fragments.js';
import { recordedUser, userContent } from '../../answers/request-extras.js';
import type { Attachment } from '../../answers/attach.js';
import { usage } from '../../exit-codes.js';
import { isFragmentUrl } from '../../../kit/fragment-sources.js';
import { interrupted } from '../../run.js';
import { swallowKeys } from './repl-keys.js';
import type { RunContext } from '../../run.js';
import type { ChatOptions } from './request.js';

/** What a session holds of fragments: those for the next message, and the system ones not kept yet. */
export interface PendingFragments {
  user: Fragment[];
  system: Fragment[];
}

/** -f and --sf given with -i, read now (a bad one ends the command, exit 2, as a one-shot's does); "-" refused: stdin is the terminal. */
export async function replFragments(ctx: RunContext<ChatOptions>): Promise<ReadFragments | undefined> {
  const { opts, io } = ctx;
  if (!opts.fragment && !opts.systemFragment) return undefined;
  if (opts.fragment?.includes('-') || opts.systemFragment?.includes('-')) throw usage(`${opts.fragment?.includes('-') ? '-f' : '--sf'} -: stdin is the terminal chat -i reads; give a file, a URL or a kept fragment`);
  return readFragments(opts, io, ctx.flags);
}

/** The user message sent: the pending fragments' texts before its own; `recorded` gets its kept form (attachments by reference, fragments by hash). */
export function userMessage(text: string, attachments: Attachment[], fragments: Fragment[], recorded: { set(sent: ChatMessage, kept: ChatMessage): unknown }): ChatMessage {
  const f = { user: fragments, system: [], stdin: false };
  const user: ChatMessage = { role: 'user', content: userContent(fragments.length ? fragmentedPrompt(text, f) : text, { attachments }, 'chat') };
  if (attachments.length || fragments.length) recorded.set(user, keptWithFragments(recordedUser(text, { attachments }), f));
  return user;
}

/** A turn answered: its fragments (and the session's system ones, the first time) are kept, when logging is. */
export function keepSent(ctx: RunContext<ChatOptions>, sent: Fragment[], pending: PendingFragments): void {
  const system = pending.system.splice(0);
  if (ctx.logging && (sent.length || system.length)) keepFragments(ctx.io, { user: sent, system, stdin: false });
}

/** `/fragment SOURCE`: a file, URL, alias or hash for the next message. */
export async function addFragment(ctx: RunContext<ChatOptions>, source: string, pending: PendingFragments): Promise<void> {
  const { io } = ctx;
  if (!source) return void io.err('usage: /fragment FILE|URL|ALIAS (router fragments list)\n');
  if (source === '-') return void io.error('/fragment -: stdin is this terminal; give a file, a URL or a kept fragment');
  // A URL may stall: Ctrl-C stops its fetch, as it stops an answer, and the session goes on.
  const stop = new AbortController();
  const release = isFragmentUrl(source) ? swallowKeys(io, () => stop.abort(interrupted())) : () => {};
  const f = await fragmentFrom(source, new FragmentStore({ env: io.env }), io, ctx.flags, AbortSignal.any([ctx.signal, stop.signal]))
    .catch((err: unknown) => {
      if (!stop.signal.aborted || ctx.signal.aborted) throw err;
    })
    .finally(release);
  if (!f) return void io.err(`/fragment ${source}: stopped (Ctrl-C); nothing added\n`);
  if (!f.content.trim()) return void io.err(`/fragment ${source} is empty: nothing added\n`);
  pending.user.push(f);
  io.err(`fragment ${source} (${f.content.length.toLocaleString('en-US')} characters); it goes before the next message\n`);
}
