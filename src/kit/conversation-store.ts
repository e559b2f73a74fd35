/**
 * Kept conversations: one JSON file per conversation in a folder (by default the state folder's
 * `conversations`, where `router chat` keeps them), written whole and renamed into place, and a
 * pointer to the latest (`last()`, the CLI's `--continue`).
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '../client/types.js';
import { stateHome } from '../config/state-dir.js';
import { withFileLock, withFileLockAsync } from '../internal/with-file-lock.js';
import { clearLeftMoves } from '../internal/lock-mark.js';
import { makeDir } from '../internal/make-dir.js';
import { randomHex } from '../internal/random-hex.js';
import { readTextReusing } from '../internal/read-many.js';
import { firstWords } from '../internal/first-words.js';
import { writeJsonLine } from '../internal/json-pieces.js';
import { isRecord } from '../internal/shape.js';
import { writeWhole } from '../internal/write-whole.js';
import { ConversationError } from './errors.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { readKeptText, sayKeptProblem } from '../internal/kept-state.js';

/** A conversation as it is kept: attachments by reference, never their bytes. */
export interface ConversationRecord {
  id: string;
  title: string;
  model?: string | undefined;
  /** The model that answered the last turn, when none was named (the service's default). */
  answered_by?: string | undefined;
  created_at: string;
  updated_at: string;
  messages: ChatMessage[];
  /** When each turn (user message, in order) was kept; null for one an older router kept (it kept no turn's time). */
  turn_times?: (string | null)[] | undefined;
}

/** What a listing holds of a conversation. */
export interface ConversationSummary {
  id: string;
  title: string;
  model: string | null;
  /** The model that answered the last turn, when none was named. */
  answered_by: string | null;
  created_at: string;
  updated_at: string;
  turns: number;
}

const NAME = /^[\w.-]{1,64}$/;

export function checkConversationId(id: string): string {
  // A leading "." would make a hidden file, which a listing leaves out (as it does temp files).
  if (!NAME.test(id) || id.startsWith('.')) throw new ConversationError('invalid_id', id);
  return id;
}

/** A new record, not yet kept: its id from the date and random hex, its title from the first prompt. */
export function newConversationRecord(model: string | undefined, first: string, id?: string): ConversationRecord {
  const now = new Date().toISOString();
  return {
    id: id === undefined ? `c_${now.slice(0, 10).replace(/-/g, '')}_${randomHex(3)}` : checkConversationId(id),
    title: firstWords(first, 60),
    model,
    created_at: now,
    updated_at: now,
    messages: [],
  };
}

/**
 * Each user message's time: this turn's the save's, those kept before as they were. A file an older router kept has
 * none: its last turn's is its last update (only a kept turn updates it), the others' unknown (null).
 */
function turnTimes(saved: ConversationRecord, turn: readonly ChatMessage[], stored: ConversationRecord | undefined): (string | null)[] {
  const users = (ms: readonly ChatMessage[]) => ms.filter((m) => m.role === 'user').length;
  const total = users(saved.messages);
  const fresh = total - users(turn);
  const before = Array.isArray(saved.turn_times) ? saved.turn_times : [];
  const older = stored && !Array.isArray(stored.turn_times) ? users(stored.messages) - 1 : -1;
  const kept = (i: number) => (typeof before[i] === 'string' ? before[i] : i === older ? stored!.updated_at : null);
  return Array.from({ length: total }, (_, i) => (i >= fresh ? saved.updated_at : kept(i)));
}

/** Routers before 00e1d666 cut a title at 60 characters with no "…": shown with one, where the first prompt goes on past it. */
function titleShown(c: ConversationRecord): string {
  const first = c.messages.find((m) => m.role === 'user')?.content;
  if (c.title.length !== OLD_TITLE_CUT || c.title.endsWith('…') || typeof first !== 'string') return c.title;
  const cut = firstWords(first, OLD_TITLE_CUT);
  return cut.endsWith('…') && c.title.startsWith(cut.slice(0, -1)) ? cut : c.title;
}
const OLD_TITLE_CUT = 60;

/** What every reader of a conversation relies on: a file edited by hand may not have it. */
function isRecordShape(c: unknown): c is ConversationRecord {
  return (
    isRecord(c) && typeof c.id === 'string' && typeof c.title === 'string' && typeof c.created_at === 'string' && typeof c.updated_at === 'string' &&
    Array.isArray(c.messages) && c.messages.every((m) => isRecord(m) && typeof m.role === 'string')
  );
}

const summarize = (c: ConversationRecord): ConversationSummary => ({
  id: c.id, title: c.title, model: c.model ?? null, answered_by: typeof c.answered_by === 'string' ? c.answered_by : null, created_at: c.created_at, updated_at: c.updated_at, turns: c.messages.filter((m) => m.role === 'user').length,
});

/** The names of StoreOptions's members, checked against it both ways (a new option is a name here too). */
const STORE_OPTIONS = optionNames<StoreOptions>()({ dir: 1, env: 1 });

export interface StoreOptions {
  /** The folder of the conversations; default: `conversations` in the state folder `env` names. */
  dir?: string | undefined;
  /** Where the state folder is found (`ROUTER_STATE_DIR`, `XDG_STATE_HOME`, `HOME`); default: `process.env`. */
  env?: NodeJS.ProcessEnv | undefined;
}

export class ConversationStore {
  readonly dir: string;

  constructor(opts: StoreOptions = {}) {
    checkOptions('new ConversationStore()', opts, STORE_OPTIONS);
    this.dir = opts.dir ?? join(stateHome(opts.env ?? process.env), 'conversations');
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  /** The conversation of that id (`ConversationError`: `invalid_id`, `not_found`, `damaged`). */
  load(id: string): ConversationRecord {
    checkConversationId(id);
    let text: string;
    try {
      text = readTextReusing(this.file(id));
    } catch {
      throw new ConversationError('not_found', id);
    }
    let c: unknown;
    try {
      c = JSON.parse(text);
    } catch {
      c = undefined;
    }
    if (!isRecordShape(c)) throw new ConversationError('damaged', id, this.file(id));
    c.title = titleShown(c);
    return c;
  }

  /** The conversation as kept now, or undefined when there is none (or it cannot be read). */
  private storedNow(id: string): ConversationRecord | undefined {
    try {
      return this.load(id);
    } catch {
      return undefined;
    }
  }

  /** The last one kept, or when that one is gone (deleted) the most recent there is; null when there is none. */
  last(): ConversationRecord | null {
    const lastFile = join(this.dir, 'LAST');
    let id = readKeptText(lastFile, 'the most recent conversation is taken as the last', 4096)?.trim();
    if (id && !existsSync(this.file(id))) {
      if (!/^[\w.-]+$/.test(id)) sayKeptProblem(lastFile, 'is damaged (no conversation id): the most recent conversation is taken as the last');
      id = undefined;
    }
    id ||= this.find().ids[0];
    return id ? this.load(id) : null;
  }

  /**
   * Keeps a turn of conversation `c`, whose messages are those this run sent and its answer.
   * `basedOn` is the conversation as this run read it (undefined: none yet). Read, change and write
   * take turns with other runs (a lock beside the file): when another kept a turn since this run
   * read it (two `chat -c` at once), this turn is added after theirs instead of replacing them.
   * Returns what was kept. Its wait for the lock blocks this thread (up to seconds, on a lock left
   * by a process of another machine or container): a program with an event loop uses saveAsync.
   */
  save(c: ConversationRecord, basedOn: ConversationRecord | undefined, turn: readonly ChatMessage[]): ConversationRecord {
    const file = this.file(checkConversationId(c.id));
    makeDir(this.dir);
    return withFileLock(file, () => this.keep(file, c, basedOn, turn));
  }

  /** save() with its wait for the lock on timers: the program's event loop runs meanwhile. */
  async saveAsync(c: ConversationRecord, basedOn: ConversationRecord | undefined, turn: readonly ChatMessage[]): Promise<ConversationRecord> {
    const file = this.file(checkConversationId(c.id));
    makeDir(this.dir);
    return withFileLockAsync(file, () => this.keep(file, c, basedOn, turn));
  }

  /** save()'s work, holding the lock. */
  private keep(file: string, c: ConversationRecord, basedOn: ConversationRecord | undefined, turn: readonly ChatMessage[]): ConversationRecord {
    const stored = this.storedNow(c.id);
    const saved = stored && stored.updated_at !== basedOn?.updated_at ? { ...stored, messages: [...stored.messages, ...turn] } : { ...c };
    // Strictly later than what it replaces, so that the next reader can tell a change even within one millisecond.
    const now = new Date().toISOString();
    saved.updated_at = stored && now <= stored.updated_at ? new Date(Date.parse(stored.updated_at) + 1).toISOString() : now;
    saved.turn_times = turnTimes(saved, turn, stored);
    // In pieces: a conversation of a very large prompt is not held again whole as JSON text, nor as its bytes.
    writeWhole(file, (fd) => writeJsonLine(fd, saved));
    writeWhole(join(this.dir, 'LAST'), `${c.id}\n`);
    return saved;
  }

  /**
   * The ids of the conversations `keep` accepts, most recent first, and the ids of files that are
   * damaged. Each file is read, looked at and let go in turn, and only its time is held: memory
   * does not follow what the conversations hold (50,000 of them list in well under 100 MB).
   */
  find(keep: (c: ConversationRecord) => boolean = () => true): { ids: string[]; damaged: string[] } {
    const names = this.files();
    // Only the names (already here) and a number each are held, in arrays that the collector never walks.
    const kept: number[] = [];
    const times = new Float64Array(names.length);
    const damaged: string[] = [];
    names.forEach((n, i) => {
      let c: ConversationRecord;
      try {
        c = this.load(n.slice(0, -5));
      } catch {
        damaged.push(n.slice(0, -5));
        return;
      }
      if (!keep(c)) return;
      times[i] = Date.parse(c.updated_at) || 0;
      kept.push(i);
    });
    kept.sort((a, b) => times[b]! - times[a]! || (names[a]! < names[b]! ? 1 : -1));
    return { ids: kept.map((i) => names[i]!.slice(0, -5)), damaged };
  }

  /** The ids there are files of, damaged ones too, in no order: by the files' names only, none read. */
  ids(): string[] {
    return this.files().map((n) => n.slice(0, -5));
  }

  /** The names of the conversations' files (`ID.json`); none when there is no folder yet. */
  private files(): string[] {
    try {
      const names = readdirSync(this.dir);
      clearLeftMoves(this.dir, names);
      return names.filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    } catch {
      return [];
    }
  }

  /** The summaries of these conversations, read one at a time (one deleted since is left out). */
  *summaries(ids: readonly string[]): Generator<ConversationSummary, void, undefined> {
    for (const id of ids) {
      const c = this.storedNow(id);
      if (c) yield summarize(c);
    }
  }

  /** Removes a conversation, a damaged one too (`not_found` when there is none). */
  delete(id: string): void {
    checkConversationId(id);
    try {
      rmSync(this.file(id));
    } catch {
      throw new ConversationError('not_found', id);
    }
  }
}
