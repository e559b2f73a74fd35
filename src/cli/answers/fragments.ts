/**
 * Chat's `-f/--fragment` and `--sf/--system-fragment` (llm's): each a file, an http(s) URL, a kept fragment's
 * alias or hash, or "-" (stdin), kept once by hash (src/kit/fragments.ts) when the answer came; the conversation
 * keeps the hashes, the request carries the text, before the prompt (or the system message), a line apart.
 */
import type { ChatMessage } from '../../client/types.js';
import { TimeoutError } from '../../client/errors.js';
import { FragmentError } from '../../kit/errors.js';
import { FragmentStore, unkeptFragment, type Fragment, type KeptMessage } from '../../kit/fragments.js';
import { FRAGMENT_TIMEOUT_MS, isFragmentUrl, readFragment } from '../../kit/fragment-sources.js';
import { withSystem } from '../../kit/messages.js';
import { describeSystemError, isSystemError } from '../../internal/system-errors.js';
import { readTextFile } from '../io/input.js';
import type { IO } from '../io/io.js';
import { waitingSpinner } from '../io/spinner.js';

type FetchFlags = { timeout?: number; maxRetries?: number };

/**
 * A fragment by URL, alias, hash or file, not kept yet. A URL is fetched whole within --timeout (default 30 s, not
 * the service's 120 s a wait), a spinner on a terminal saying what it waits for; a timeout names the flag.
 */
export async function fragmentFrom(ref: string, store: FragmentStore, io: IO, flags: FetchFlags, signal = io.interrupt): Promise<Fragment> {
  const url = isFragmentUrl(ref);
  const stop = url ? waitingSpinner(io, `fetching ${ref} (up to ${flags.timeout ?? FRAGMENT_TIMEOUT_MS / 1000}s)`) : () => {};
  try {
    return await readFragment(ref, store, { env: io.env, signal, timeoutMs: flags.timeout === undefined ? undefined : flags.timeout * 1000, maxRetries: flags.maxRetries });
  } catch (err) {
    if (err instanceof FragmentError && err.cause instanceof TimeoutError) err.message += flags.timeout === undefined ? ' (the default); --timeout 2m waits longer' : ' (--timeout, which bounds the whole fetch of a fragment URL)';
    throw err;
  } finally {
    stop();
  }
}

export interface FragmentOpts {
  fragment?: string[];
  systemFragment?: string[];
}

export interface ReadFragments {
  user: Fragment[];
  system: Fragment[];
  /** Stdin was one of them ("-"): the prompt is the arguments alone. */
  stdin: boolean;
}

/**
 * Reads the fragments of the flags, in order; stdin once. None is kept yet: `keepFragments` keeps them once the
 * answer came. A blank one adds nothing (no empty line before the prompt): said, but for stdin.
 */
export async function readFragments(opts: FragmentOpts, io: IO, flags: FetchFlags): Promise<ReadFragments> {
  const store = new FragmentStore({ env: io.env });
  const read = async (flag: string, refs: string[] | undefined) => {
    const out: Fragment[] = [];
    for (const ref of refs ?? []) {
      if (ref === '-') {
        const text = await readTextFile(flag, '-', io);
        // Empty piped stdin beside a prompt is no mistake (a grep before it found nothing), as for the prompt's stdin.
        if (text.trim()) out.push(unkeptFragment(text, '-'));
        continue;
      }
      const f = await fragmentFrom(ref, store, io, flags);
      if (f.content.trim()) out.push(f);
      else io.note(`note: ${flag} ${ref} is ${f.content ? 'blank' : 'empty'}: nothing added`);
    }
    return out;
  };
  const user = await read('--fragment', opts.fragment);
  const system = await read('--sf', opts.systemFragment);
  return { user, system, stdin: [...(opts.fragment ?? []), ...(opts.systemFragment ?? [])].includes('-') };
}

/** The prompt as sent: the fragments' texts, then the prompt, a line apart (as llm joins them). */
export const fragmentedPrompt = (prompt: string, f: ReadFragments) => [...f.user.map((x) => x.content), ...(prompt ? [prompt] : [])].join('\n');

/** The user message as a conversation keeps it: its fragments by hash. */
export function keptWithFragments(message: ChatMessage, f: ReadFragments): KeptMessage {
  return f.user.length ? { ...message, fragments: f.user.map((x) => x.hash) } : message;
}

/**
 * The history as sent, from the history as kept (fragments by hash): `system` (-s) and the system
 * fragments (--sf) make its system message; `recorded` maps each message changed to its kept form.
 */
export function sentHistory(env: NodeJS.ProcessEnv, history: readonly ChatMessage[], system: string | undefined, f: ReadFragments | undefined, recorded: { set(sent: ChatMessage, kept: ChatMessage): unknown }): ChatMessage[] {
  let kept: KeptMessage[] = withSystem([...history], system);
  if (f?.system.length) {
    const before = kept.find((m) => m.role === 'system');
    const text = system ?? (typeof before?.content === 'string' ? before.content : '');
    kept = [{ role: 'system', content: text, fragments: f.system.map((x) => x.hash) }, ...kept.filter((m) => m.role !== 'system')];
  }
  if (!kept.some((m) => 'fragments' in m)) return kept;
  const sent = new FragmentStore({ env }).expand(kept, f ? [...f.user, ...f.system] : []);
  sent.forEach((m, i) => {
    if (m !== kept[i]) recorded.set(m, kept[i]!);
  });
  return sent;
}

/** Keeps the fragments of a call that was answered (one kept already keeps its first source); one that cannot be is said. */
export function keepFragments(io: IO, f: ReadFragments): void {
  const store = new FragmentStore({ env: io.env });
  for (const x of [...f.user, ...f.system]) {
    try {
      store.put(x.content, x.source);
    } catch (err) {
      io.note(`warning: fragment ${x.source} was not kept (${isSystemError(err) ? describeSystemError(err) : (err as Error).message}): chat -c cannot send it again`);
    }
  }
}
