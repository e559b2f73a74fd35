/** `router logs`: the turns of the conversations chat keeps, as `llm logs` shows its log (src/kit/conversation-log.ts). */
import { defineCommand } from '../define.js';
import { integerIn, nonEmpty } from '../flags/options.js';
import { PROSE, visible } from '../../internal/visible.js';
import { ConversationStore } from '../../kit/conversation-store.js';
import { queryLog, truncated, type LogEntry } from '../../kit/conversation-log.js';
import { resolveModel } from '../../kit/model-aliases.js';
import { leftOutDamaged } from '../io/damaged-note.js';
import { checkConversationId, conversationFile, findConversationIds, lastConversation, nearConversation } from '../saved/conversations.js';
import { llmLogsWord } from '../flags/other-tools-words.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import type { IO } from '../io/io.js';

const FIELDS = ['id', 'conversation_id', 'conversation_title', 'model', 'updated_at', 'datetime_utc', 'turn', 'system', 'prompt', 'response', 'fragments', 'system_fragments'] as const;

export const logs = defineCommand({
  name: 'logs',
  jsonFields: FIELDS,
  printsKept: true,
  summary: 'show what chat kept: the last N turns, a search',
  description:
    'The turns of the conversations router chat keeps (unless --no-log), as llm logs shows them: the last 3, newest last; -n N the last N (0: all). Words after the flags (or -q/--query TEXT) keep the turns whose prompt or answer holds every word or "quoted phrase", in any case. Each turn is headed by the time it was kept (llm\'s datetime_utc; a turn an older router kept shows "by" its conversation\'s last update), yet placed by its conversation\'s last update: the turns of a conversation stay together, in their order.',
  args: [{ name: '[search...]', help: 'words that must be in the prompt or the answer (as --query)' }],
  flags: {
    count: { flags: '-n, --count <n>', help: 'the last N turns, newest last (default 3; 0: all)', parse: integerIn(0) },
    query: { flags: '--query <text>', help: 'words (or "quoted phrases") that must all be in the prompt or the answer; -q TEXT as in llm', parse: nonEmpty },
    model: { flags: '-m, --model <id>', help: 'only turns of this model (an alias too)', parse: nonEmpty, complete: 'models' },
    conversation: { flags: '--conversation <id>', help: 'only turns of this conversation', complete: 'conversations' },
    current: { flags: '-c, --current', help: 'only turns of the last conversation, the one chat -c goes on with (llm logs -c)' },
    response: { flags: '-r, --response', help: "print only the last turn's answer, as it was (llm logs -r)" },
    truncate: { flags: '-t, --truncate', help: 'cut each prompt, system message and answer to 100 characters on one line' },
    json: { flags: '--json', help: 'print them as JSON: [{ id, conversation_id, model, datetime_utc, prompt, response, fragments, … }]' },
  },
  notes: 'Fragments (chat -f, --sf) are listed by hash: router fragments show HASH prints one. The global -q (--quiet) leaves the words after it as the search, so llm\'s `logs -q TEXT` reads the same here.',
  examples: [
    'router chat --conversation pets "ten names for a pet pelican" \\\n--model local/echo',
    'router logs',
    'router logs -n 10 --truncate',
    'router logs -q pelican',
    'router logs --query "pet pelican" --json | jq -r \'.[].response\'',
    'router logs --conversation pets -n 0 --json id,prompt',
    'router logs -m local/echo -n 1',
    'router logs -c                  # the turns of the last conversation',
    'router logs -r                  # the last answer alone',
  ],
  run: async ({ io, opts, env }, search) => {
    if (opts.conversation !== undefined) {
      const id = checkConversationId(opts.conversation);
      // A mistyped id is said with the nearest, not an empty log; a flag naming none is a usage error (docs/reliability.md).
      if (!findConversationIds(env).includes(id)) throw usage(`--conversation ${id}: no conversation has that id${await nearConversation(env, id)} (router conversations list shows them)`);
    }
    if (opts.current && opts.conversation !== undefined) throw usage('give one of -c/--current and --conversation ID');
    const conversation = opts.current ? (lastConversation(env)?.id ?? '') : opts.conversation;
    const model = opts.model === undefined ? undefined : (resolveModel(opts.model, env) ?? opts.model);
    const query = [opts.query, ...search].filter(Boolean).join(' ');
    if (opts.response && (opts.json || opts.truncate || opts.count !== undefined)) throw usage('-r/--response prints the last answer alone: give it without --json, --truncate and -n');
    const { entries, damaged } = queryLog(new ConversationStore({ env }), { count: opts.response ? 1 : (opts.count ?? 3), query, model, conversation });
    for (const id of damaged) leftOutDamaged(io, conversationFile(env, id), `router conversations delete ${id} removes it`);
    // llm's `logs off` (path, status, …) is a search here: one that finds nothing says where router has it.
    const llmWord = llmLogsWord(search);
    const none = (): string => (query ? `no kept turn holds ${query}${llmWord ? ` (llm's logs ${search[0]!}: ${llmWord})` : ''}` : 'no conversations yet: router chat keeps each one (unless --no-log)');
    if (opts.response) {
      const last = [...entries].at(-1);
      if (!last) throw new CliError(none(), EXIT.NOT_FOUND);
      const text = last.response.endsWith('\n') ? last.response : `${last.response}\n`;
      io.out(io.stdoutTTY ? visible(text, PROSE) : text);
      return;
    }
    // Hidden before a cut, which would leave a key's start too short to be told from other text.
    const short = (text: string) => truncated(io.redact(text));
    const cut = (e: LogEntry): LogEntry => (opts.truncate ? { ...e, prompt: short(e.prompt), response: short(e.response), system: e.system === null ? null : short(e.system) } : e);
    // Piped, the array is written as it is read: the whole log as one string would pass V8's longest (a 600 MB log did).
    if (opts.json) return io.jsonShape.jq !== undefined || io.stdoutTTY ? io.json([...entries].map(cut)) : jsonArray(io, entries, cut);
    let chunk = '';
    let any = false;
    for (const e of entries) {
      chunk += shown(cut(e), any);
      any = true;
      if (chunk.length < 65_536) continue;
      if (!io.out(io.stdoutTTY ? visible(chunk, PROSE) : chunk)) await io.drain();
      chunk = '';
    }
    if (chunk) io.out(io.stdoutTTY ? visible(chunk, PROSE) : chunk);
    if (!any && llmWord && !io.quiet) io.note(`note: ${none()}`);
    else if (!any) io.info(none());
  },
});

/** The entries as one JSON array (as JSON.stringify writes it), in pieces of 64 KB. */
async function jsonArray(io: IO, entries: Iterable<LogEntry>, cut: (e: LogEntry) => LogEntry): Promise<void> {
  let chunk = '[';
  let first = true;
  for (const e of entries) {
    chunk += `${first ? '' : ','}${io.jsonLine(cut(e)).slice(0, -1)}`;
    first = false;
    if (chunk.length < 65_536) continue;
    if (!io.out(chunk)) await io.drain();
    chunk = '';
  }
  io.out(`${chunk}]\n`);
}

/** A turn as Markdown, as llm logs prints one: a heading, the model, then prompt, system and response. */
function shown(e: LogEntry, after: boolean): string {
  // A turn an older router kept without its time: only that it was kept by the conversation's last update is known.
  const lines = [`${after ? '\n' : ''}# ${e.datetime_utc ?? `by ${e.updated_at}`}    id: ${e.id}`, '', `Model: **${e.model ?? 'default'}**`, ''];
  if (e.fragments.length) lines.push('## Fragments', '', ...e.fragments.map((h) => `- ${h}`), '');
  lines.push('## Prompt', '', e.prompt.replace(/\n+$/, ''), '');
  if (e.system) lines.push('## System', '', e.system.replace(/\n+$/, ''), '');
  if (e.system_fragments.length) lines.push('## System fragments', '', ...e.system_fragments.map((h) => `- ${h}`), '');
  lines.push('## Response', '', e.response.replace(/\n+$/, ''), '');
  return lines.join('\n');
}
