/** `router conversations list|show|delete`: the conversations `router chat` keeps. */
import { defineCommand, defineGroup } from '../define.js';
import { integerIn } from '../flags/options.js';
import { PROSE, visible } from '../../internal/visible.js';
import { CliError, EXIT } from '../exit-codes.js';
import { leftOutDamaged } from '../io/damaged-note.js';
import { conversationFile, conversationSummaries, deleteConversation, findConversations, lastConversation, loadConversation, withGuess, type Conversation, type ConversationSummary } from '../saved/conversations.js';
import type { ChatMessage } from '../../client/types.js';

const JSON_FLAG = { flags: '--json', help: 'print them as JSON' } as const;

/** Every word of the search in the title or the messages (case-insensitive). */
function matches(c: Conversation, words: string[]): boolean {
  if (!words.length) return true;
  const text = [c.id, c.title, ...c.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))].join('\n').toLowerCase();
  return words.every((w) => text.includes(w.toLowerCase()));
}

const list = defineCommand({
  name: 'list',
  jsonFields: ['id', 'title', 'model', 'answered_by', 'created_at', 'updated_at', 'turns'],
  printsKept: true,
  summary: 'list conversations, most recent first',
  description: 'list conversations, most recent first; SEARCH keeps those whose id, title or messages hold every word',
  args: [{ name: '[search...]', help: 'words to look for (case-insensitive)' }],
  flags: { limit: { flags: '--limit <n>', help: 'at most N conversations (the most recent)', parse: integerIn(1) }, json: JSON_FLAG },
  notes: 'On a terminal, a table; piped, one tab-separated line each: id, updated, turns, model, title. The model is the one named; where none was, the one that answered last (the service\'s default), or "default" for a conversation kept before router noted it.',
  examples: ['router conversations list', 'router conversations list --limit 5 river', 'router conversations list --json id,turns'],
  run: async ({ io, opts, env }, search) => {
    const { ids, damaged } = findConversations(env, (c) => matches(c, search));
    // Left out of the list: said piped too.
    for (const id of damaged) leftOutDamaged(io, conversationFile(env, id), `router conversations delete ${id} removes it`);
    const chosen = ids.slice(0, opts.limit);
    if (opts.json) return io.json([...conversationSummaries(env, chosen)]);
    if (!chosen.length) return io.info(search.length ? `no conversation holds ${search.map((w) => `"${w}"`).join(' and ')}` : 'no conversations yet: router chat keeps each one (unless --no-log)');
    // One line per conversation whatever a title holds (a file edited by hand): its control characters escaped.
    const fields = (c: ConversationSummary) => [c.id, c.updated_at, String(c.turns), c.model ?? c.answered_by ?? 'default', c.title].map((f) => visible(f));
    // On a terminal a table, as the other lists (keys, usage, profiles) print there.
    if (io.stdoutTTY) {
      io.out((await import('../io/table.js')).table(io, ['id', 'updated', 'turns', 'model', 'title'], [...conversationSummaries(env, chosen)].map(fields), { fit: 4 }));
      return;
    }
    let chunk = '';
    for (const c of conversationSummaries(env, chosen)) {
      chunk += `${fields(c).join('\t')}\n`;
      if (chunk.length < 65_536) continue;
      if (!io.out(chunk)) await io.drain();
      chunk = '';
    }
    if (chunk) io.out(chunk);
  },
});

const show = defineCommand({
  name: 'show',
  jsonFields: ['id', 'title', 'model', 'created_at', 'updated_at', 'messages'],
  printsKept: true,
  summary: 'print a conversation',
  args: [{ name: '[id]', help: 'conversation id (left out: the last one, which chat -c goes on with)', complete: 'conversations' }],
  flags: { json: { flags: '--json', help: 'print the whole record' } },
  examples: ['router chat --conversation notes "remember: the door code is 4711" \\\n--model local/echo', 'router conversations show notes', 'router conversations show notes --json messages', 'router conversations show            # the last one'],
  run: async ({ io, opts, env }, id) => {
    // As `llm logs -c`: with no id, the conversation `chat -c` would take up.
    const c = id === undefined ? lastConversation(env) : await withGuess(env, id, () => loadConversation(env, id), 'conversations show');
    if (!c) throw new CliError('no conversations yet: router chat keeps each one (unless --no-log)', EXIT.NOT_FOUND);
    if (opts.json) return io.json(c);
    const text = `${c.messages.map((m) => `${m.role}: ${shownMessage(m)}`).join('\n\n')}\n`;
    // On a terminal, escape sequences in it are shown, not obeyed; piped, it is the text as kept.
    io.out(io.stdoutTTY ? visible(text, PROSE) : text);
  },
});

/** A message as `show` prints it: its text (parts as JSON), then each tool call the model made; a turn of only calls has no text. */
function shownMessage(m: ChatMessage): string {
  const text = typeof m.content === 'string' ? m.content : m.content === null || m.content === undefined ? '' : JSON.stringify(m.content);
  const calls = (Array.isArray(m.tool_calls) ? (m.tool_calls as { function?: { name?: unknown; arguments?: unknown } }[]) : []).map((call) => `[tool call] ${String(call?.function?.name)} ${String(call?.function?.arguments ?? '')}`);
  return [text.replace(/\n+$/, ''), ...calls].filter(Boolean).join('\n');
}

const remove = defineCommand({
  name: 'delete',
  summary: 'delete a conversation',
  args: [{ name: '<id>', help: 'conversation id', complete: 'conversations' }],
  examples: ['router chat --conversation scratch "hi" --model local/echo', 'router conversations delete scratch'],
  run: async ({ io, env }, id) => {
    await withGuess(env, id, () => deleteConversation(env, id), 'conversations delete');
    io.info(`deleted ${id}`);
  },
});

export const conversations = defineGroup({
  name: 'conversations',
  summary: 'list, show and delete the conversations chat keeps',
  description: 'The conversations router chat keeps: list, show and delete them. Continue one with router chat -c (the last) or --conversation ID.',
  commands: [list, show, remove],
  examples: ['router chat --conversation trip "plan a day in Lyon" --model local/echo', 'router chat -c "and the evening?"', 'router conversations show trip', 'router conversations delete trip'],
});
