/**
 * Chat's `-f/--fragment` and `--sf/--system-fragment` (llm's): each a file, an http(s) URL, a kept fragment's
 * alias or hash, or "-" (stdin), kept once by hash (src/kit/fragments.ts); the conversation keeps the hashes,
 * the request carries the text, before the prompt (or the system message), a line apart.
 */
import type { ChatMessage } from '../../client/types.js';
import { FragmentStore, type Fragment, type KeptMessage } from '../../kit/fragments.js';
import { loadFragment } from '../../kit/fragment-sources.js';
import { withSystem } from '../../kit/messages.js';
import { readTextFile } from '../io/input.js';
import type { IO } from '../io/io.js';

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

/** Reads the fragments of the flags, in order; stdin once. A URL is fetched within the run's --timeout and --max-retries. */
export async function readFragments(opts: FragmentOpts, io: IO, flags: { timeout?: number; maxRetries?: number }): Promise<ReadFragments> {
  const store = new FragmentStore({ env: io.env });
  const read = async (flag: string, refs: string[] | undefined) => {
    const out: Fragment[] = [];
    for (const ref of refs ?? []) {
      if (ref === '-') {
        const text = await readTextFile(flag, '-', io);
        // Empty piped stdin beside a prompt is no mistake (a grep before it found nothing), as for the prompt's stdin.
        if (text.trim()) out.push(store.put(text, '-'));
      } else out.push(await loadFragment(ref, store, { env: io.env, signal: io.interrupt, timeoutMs: flags.timeout === undefined ? undefined : flags.timeout * 1000, maxRetries: flags.maxRetries }));
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
  const sent = new FragmentStore({ env }).expand(kept);
  sent.forEach((m, i) => {
    if (m !== kept[i]) recorded.set(m, kept[i]!);
  });
  return sent;
}
