/** `router conversations list|show|delete`: the conversations `router chat` keeps. */
import type { Command } from '../commander.js';
import { action, type RunContext } from '../run.js';
import { integerIn } from '../options.js';
import { visible } from '../../internal/visible.js';
import { conversationSummaries, deleteConversation, findConversations, loadConversation, type Conversation } from '../conversations.js';

type JsonOpt = { json?: boolean };
type ListOpts = JsonOpt & { limit?: number };

/** Every word of the search in the title or the messages (case-insensitive). */
function matches(c: Conversation, words: string[]): boolean {
  if (!words.length) return true;
  const text = [c.id, c.title, ...c.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))].join('\n').toLowerCase();
  return words.every((w) => text.includes(w.toLowerCase()));
}

export function registerConversations(program: Command): void {
  const conv = program
    .command('conversations')
    .description('The conversations router chat keeps: list, show and delete them. Continue one with router chat -c (the last) or --conversation ID.');
  conv
    .command('list')
    .description('list conversations, most recent first; SEARCH keeps those whose id, title or messages hold every word')
    .argument('[search...]', 'words to look for (case-insensitive)')
    .option('--limit <n>', 'at most N conversations (the most recent)', integerIn(1))
    .option('--json', 'print them as JSON')
    .addHelpText('after', '\nPiped, one tab-separated line each: id, updated, turns, model, title.\n\nExamples:\n  $ router conversations list\n  $ router conversations list --limit 5 river\n  $ router conversations list --json id,turns')
    .action(action<ListOpts, [string[]]>(async ({ io, opts, env }, search: string[]) => {
      const { ids, damaged } = findConversations(env, (c) => matches(c, search));
      for (const id of damaged) io.info(`warning: the conversation file of ${id} is damaged (router conversations delete ${id} removes it)`);
      const chosen = ids.slice(0, opts.limit);
      if (opts.json) return io.json([...conversationSummaries(env, chosen)]);
      if (!chosen.length) return io.info(search.length ? `no conversation holds ${search.map((w) => `"${w}"`).join(' and ')}` : 'no conversations yet: router chat keeps each one (unless --no-log)');
      // One line per conversation whatever a title holds (a file edited by hand): its control characters escaped.
      let chunk = '';
      for (const c of conversationSummaries(env, chosen)) {
        chunk += `${[c.id, c.updated_at, String(c.turns), c.model ?? '-', c.title].map((f) => visible(f)).join('\t')}\n`;
        if (chunk.length < 65_536) continue;
        if (!io.out(chunk)) await io.drain();
        chunk = '';
      }
      if (chunk) io.out(chunk);
    }));
  conv
    .command('show')
    .description('print a conversation')
    .argument('<id>', 'conversation id')
    .option('--json', 'print the whole record')
    .addHelpText('after', '\nExamples:\n  $ router chat --conversation notes "remember: the door code is 4711" --model local/echo\n  $ router conversations show notes\n  $ router conversations show notes --json messages')
    .action(action<JsonOpt, [string]>(async ({ io, opts, env }: RunContext<JsonOpt>, id: string) => {
      const c = loadConversation(env, id);
      if (opts.json) return io.json(c);
      const text = `${c.messages.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`).join('\n\n')}\n`;
      // On a terminal, escape sequences in it are shown, not obeyed; piped, it is the text as kept.
      io.out(io.stdoutTTY ? visible(text, '\n\t') : text);
    }));
  conv
    .command('delete')
    .description('delete a conversation')
    .argument('<id>', 'conversation id')
    .addHelpText('after', '\nExamples:\n  $ router chat --conversation scratch "hi" --model local/echo\n  $ router conversations delete scratch')
    .action(action<object, [string]>(async ({ io, env }, id: string) => {
      deleteConversation(env, id);
      io.info(`deleted ${id}`);
    }));
}
