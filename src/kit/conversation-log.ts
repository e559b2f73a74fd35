/**
 * The log of kept conversations, turn by turn, as `llm logs` shows its responses: the last N (newest last),
 * those whose prompt or response holds every term of a search, of a model, of a conversation. Read from the
 * conversations' files one at a time: memory holds the N entries asked for and a number per conversation,
 * not the log (10,000 conversations are read in turn). Each turn has its own time (when it was kept), yet the
 * turns of a conversation are listed together, in their order, placed by its last update.
 */
import type { ChatMessage } from '../client/types.js';
import type { ConversationRecord, ConversationStore } from './conversation-store.js';
import { checkCounts } from './checked-options.js';

export interface LogEntry {
  /** `CONVERSATION#N`: the Nth turn of that conversation. */
  id: string;
  conversation_id: string;
  conversation_title: string;
  /** The model named, else the one that answered (the service's default); null when neither was kept. */
  model: string | null;
  /** The conversation's last update. */
  updated_at: string;
  /** When this turn was kept (llm's name); null for a turn before the last that an older router kept without its time. */
  datetime_utc: string | null;
  turn: number;
  system: string | null;
  prompt: string;
  response: string;
  /** The hashes of the prompt's fragments (router fragments show HASH), and of the system message's. */
  fragments: string[];
  system_fragments: string[];
}

export interface LogQuery {
  /** The last N turns; 0 or undefined: all. */
  count?: number | undefined;
  /** Words (and "quoted phrases") that must all be in the prompt or the response, in any case. */
  query?: string | undefined;
  /** Only turns of this model. */
  model?: string | undefined;
  /** Only turns of this conversation. */
  conversation?: string | undefined;
}

/** The terms of a search: "quoted phrases" and words, lower-cased. */
export function searchTerms(query: string): string[] {
  const terms: string[] = [];
  for (const m of query.matchAll(/"([^"]*)"|(\S+)/g)) {
    const term = (m[1] ?? m[2]!).trim().toLowerCase();
    if (term) terms.push(term);
  }
  return terms;
}

const textOf = (m: ChatMessage | undefined): string => {
  if (!m || m.content === null || m.content === undefined) return '';
  if (typeof m.content === 'string') return m.content;
  return m.content.map((p) => (typeof p === 'object' && p && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).filter(Boolean).join('\n');
};

const hashes = (m: ChatMessage | undefined): string[] => {
  const f = (m as { fragments?: unknown } | undefined)?.fragments;
  return Array.isArray(f) ? f.filter((h): h is string => typeof h === 'string') : [];
};

const modelOf = (c: ConversationRecord) => c.model ?? (typeof c.answered_by === 'string' ? c.answered_by : null);

/** The turns of a conversation, in order: each user message, the system message then, and the answer's text. */
export function conversationTurns(c: ConversationRecord): LogEntry[] {
  const turns: LogEntry[] = [];
  let system: ChatMessage | undefined;
  const times = Array.isArray(c.turn_times) ? c.turn_times : [];
  const users = c.messages.filter((m) => m.role === 'user').length;
  // An older file kept no turn's time: its last turn's is the conversation's last update (only a kept turn updates it).
  const timeOf = (n: number) => (typeof times[n - 1] === 'string' ? times[n - 1]! : n === users ? c.updated_at : null);
  for (const m of c.messages) {
    if (m.role === 'system') system = m;
    else if (m.role === 'user') {
      const n = turns.length + 1;
      turns.push({
        id: `${c.id}#${n}`, conversation_id: c.id, conversation_title: c.title, model: modelOf(c), updated_at: c.updated_at, datetime_utc: timeOf(n), turn: n,
        system: system ? textOf(system) : null, prompt: textOf(m), response: '', fragments: hashes(m), system_fragments: hashes(system),
      });
    } else if (m.role === 'assistant' && turns.length) {
      const text = textOf(m);
      // A tool loop's rounds: the answer is the text of the last that has any.
      if (text) turns.at(-1)!.response = text;
    }
  }
  return turns;
}

const matches = (e: LogEntry, terms: string[]) => {
  if (!terms.length) return true;
  const prompt = e.prompt.toLowerCase();
  const response = e.response.toLowerCase();
  return terms.every((t) => prompt.includes(t) || response.includes(t));
};

/**
 * The entries a query asks for, newest last, read as they are iterated (all of them: one conversation at a time;
 * the last N: those N); the ids of damaged files in `damaged`, known at once.
 */
export function queryLog(store: ConversationStore, q: LogQuery = {}): { entries: Iterable<LogEntry, void, undefined>; damaged: string[] } {
  // Else -1 gave no turn, NaN every one, 1.5 two.
  checkCounts('queryLog()', q, ['count'], 0);
  const terms = searchTerms(q.query ?? '');
  const wanted = (c: ConversationRecord) => (q.conversation === undefined || c.id === q.conversation) && (q.model === undefined || modelOf(c) === q.model);
  const { ids, damaged } = store.find((c) => wanted(c) && (!terms.length || conversationTurns(c).some((e) => matches(e, terms))));
  const turnsOf = (id: string): LogEntry[] => {
    try {
      return conversationTurns(store.load(id)).filter((e) => matches(e, terms));
    } catch {
      // Deleted since, or damaged: left out.
      return [];
    }
  };
  return { entries: q.count ? lastOf(ids, q.count, turnsOf) : allOf(ids, turnsOf), damaged };
}

/** Every entry: the oldest conversation first. */
function* allOf(ids: string[], turnsOf: (id: string) => LogEntry[]): Generator<LogEntry, void, undefined> {
  for (let i = ids.length - 1; i >= 0; i--) yield* turnsOf(ids[i]!);
}

/** The last `count`: the most recent conversation first, its last turn first, until found; then reversed. */
function lastOf(ids: string[], count: number, turnsOf: (id: string) => LogEntry[]): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const id of ids) {
    const turns = turnsOf(id);
    for (let i = turns.length - 1; i >= 0 && entries.length < count; i--) entries.push(turns[i]!);
    if (entries.length >= count) break;
  }
  return entries.reverse();
}

/** A text cut to `max` characters on one line, "..." after (llm's --truncate). */
export function truncated(text: string, max = 100): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
}
