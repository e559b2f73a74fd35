/**
 * Conversations of `router chat`, kept beside the usage ledger: one JSON file per conversation in
 * $XDG_STATE_HOME/router/conversations, written whole and renamed into place, and a pointer to
 * the latest for `--continue`.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { readLocalText } from '../../internal/local-file.js';
import { randomHex } from '../../internal/random-hex.js';
import { join } from 'node:path';
import type { ChatMessage } from '../../client/types.js';
import { stateHome } from '../../config/state-dir.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { writeWhole } from '../../internal/write-whole.js';
import { withFileLock } from '../../internal/file-lock.js';
import { makeDir } from '../../internal/make-dir.js';
import { isRecord } from '../../internal/shape.js';
import { readTextReusing } from '../../internal/read-many.js';

export interface Conversation {
  id: string;
  title: string;
  model?: string;
  created_at: string;
  updated_at: string;
  messages: ChatMessage[];
}

const dir = (env: NodeJS.ProcessEnv) => join(stateHome(env), 'conversations');
const NAME = /^[\w.-]{1,64}$/;

export function checkConversationId(id: string): string {
  // A leading "." would make a hidden file, which list leaves out (as it does temp files).
  if (!NAME.test(id) || id.startsWith('.')) throw usage(`conversation id "${id}": use 1 to 64 letters, digits, ".", "_" or "-", not starting with "."`);
  return id;
}

export function newConversation(model: string | undefined, first: string): Conversation {
  const now = new Date().toISOString();
  const id = `c_${now.slice(0, 10).replace(/-/g, '')}_${randomHex(3)}`;
  return { id, title: first.replace(/\s+/g, ' ').trim().slice(0, 60), model, created_at: now, updated_at: now, messages: [] };
}

export function loadConversation(env: NodeJS.ProcessEnv, id: string): Conversation {
  checkConversationId(id);
  let text: string;
  try {
    text = readTextReusing(join(dir(env), `${id}.json`));
  } catch {
    throw new CliError(`no conversation ${id} (router conversations list shows them)`, EXIT.NOT_FOUND);
  }
  let c: unknown;
  try {
    c = JSON.parse(text);
  } catch {
    c = undefined;
  }
  if (!isConversation(c)) throw damaged(env, id);
  return c;
}

const damaged = (env: NodeJS.ProcessEnv, id: string) =>
  new CliError(`the conversation file ${join(dir(env), `${id}.json`)} is damaged (router conversations delete ${id} removes it)`, EXIT.FAILURE);

/** What every reader of a conversation relies on: a file edited by hand may not have it. */
function isConversation(c: unknown): c is Conversation {
  return (
    isRecord(c) && typeof c.id === 'string' && typeof c.title === 'string' && typeof c.created_at === 'string' && typeof c.updated_at === 'string' &&
    Array.isArray(c.messages) && c.messages.every((m) => isRecord(m) && typeof m.role === 'string')
  );
}

/**
 * The conversation `--continue` takes up: the last one saved, or when that one is gone (deleted),
 * the most recent there is (null when there is none).
 */
export function lastConversation(env: NodeJS.ProcessEnv): Conversation | null {
  let id: string | undefined;
  try {
    id = readLocalText(join(dir(env), 'LAST'), 4096).trim();
  } catch {
    id = undefined;
  }
  if (!id || !existsSync(join(dir(env), `${id}.json`))) id = findConversations(env).ids[0];
  return id ? loadConversation(env, id) : null;
}

/** The conversation as saved now, or undefined when there is none (or it cannot be read). */
function storedNow(env: NodeJS.ProcessEnv, id: string): Conversation | undefined {
  try {
    return loadConversation(env, id);
  } catch {
    return undefined;
  }
}

/**
 * Saves a turn of conversation `c`, whose messages are those this run sent and its answer.
 * `basedOn` is the conversation as this run read it (undefined: none yet). Read, change and write
 * take turns with other runs (a lock beside the file): when another saved a turn since this run
 * read it (two `chat -c` at once), this turn is added after theirs instead of replacing them.
 * Returns what was saved.
 */
export function saveConversation(env: NodeJS.ProcessEnv, c: Conversation, basedOn: Conversation | undefined, turn: readonly ChatMessage[]): Conversation {
  const file = join(dir(env), `${c.id}.json`);
  makeDir(dir(env));
  return withFileLock(file, () => {
    const stored = storedNow(env, c.id);
    const saved = stored && stored.updated_at !== basedOn?.updated_at ? { ...stored, messages: [...stored.messages, ...turn] } : c;
    // Strictly later than what it replaces, so that the next reader can tell a change even within one millisecond.
    const now = new Date().toISOString();
    saved.updated_at = stored && now <= stored.updated_at ? new Date(Date.parse(stored.updated_at) + 1).toISOString() : now;
    writeWhole(file, `${JSON.stringify(saved)}\n`);
    writeWhole(join(dir(env), 'LAST'), `${c.id}\n`);
    return saved;
  });
}

/** What `conversations list` prints of a conversation. */
export interface ConversationSummary {
  id: string;
  title: string;
  model: string | null;
  created_at: string;
  updated_at: string;
  turns: number;
}

const summarize = (c: Conversation): ConversationSummary => ({
  id: c.id, title: c.title, model: c.model ?? null, created_at: c.created_at, updated_at: c.updated_at, turns: c.messages.filter((m) => m.role === 'user').length,
});

/**
 * The ids of the conversations `keep` accepts, most recent first, and the ids of files that are
 * damaged. Each file is read, looked at and let go in turn, and only its time is held: memory
 * does not follow what the conversations hold (50,000 of them list in well under 100 MB).
 */
export function findConversations(env: NodeJS.ProcessEnv, keep: (c: Conversation) => boolean = () => true): { ids: string[]; damaged: string[] } {
  let names: string[];
  try {
    names = readdirSync(dir(env)).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  } catch {
    return { ids: [], damaged: [] };
  }
  // Only the names (already here) and a number each are held, in arrays that the collector never walks.
  const kept: number[] = [];
  const times = new Float64Array(names.length);
  const damagedIds: string[] = [];
  names.forEach((n, i) => {
    let c: Conversation;
    try {
      c = loadConversation(env, n.slice(0, -5));
    } catch {
      damagedIds.push(n.slice(0, -5));
      return;
    }
    if (!keep(c)) return;
    times[i] = Date.parse(c.updated_at) || 0;
    kept.push(i);
  });
  kept.sort((a, b) => times[b]! - times[a]! || (names[a]! < names[b]! ? 1 : -1));
  return { ids: kept.map((i) => names[i]!.slice(0, -5)), damaged: damagedIds };
}

/** The summaries of these conversations, read one at a time (one deleted since is left out). */
export function* conversationSummaries(env: NodeJS.ProcessEnv, ids: readonly string[]): Generator<ConversationSummary> {
  for (const id of ids) {
    const c = storedNow(env, id);
    if (c) yield summarize(c);
  }
}

/** Removes a conversation, a damaged one too. */
export function deleteConversation(env: NodeJS.ProcessEnv, id: string): void {
  checkConversationId(id);
  try {
    rmSync(join(dir(env), `${id}.json`));
  } catch {
    throw new CliError(`no conversation ${id} (router conversations list shows them)`, EXIT.NOT_FOUND);
  }
}
