/**
 * Fragments, as simonw/llm has them: pieces of a prompt (a file, a page, stdin) kept once by the SHA-256 of
 * their text in the state folder's `fragments/` (`HASH.json`: hash, source, created_at, content), and named
 * by aliases (`fragments/aliases/NAME`, holding the hash). A conversation keeps a message's fragments by
 * hash (`fragments` on it: a system message's are llm's --sf) and `expand` makes the messages as sent.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '../client/types.js';
import { stateHome } from '../config/state-dir.js';
import { readLocalText } from '../internal/local-file.js';
import { isRecord } from '../internal/shape.js';
import { writeWhole } from '../internal/write-whole.js';
import { firstWords } from '../internal/first-words.js';
import { FragmentError } from './errors.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { readKeptText, sayKeptProblem } from '../internal/kept-state.js';

export interface Fragment {
  /** The SHA-256 of its text, in hex. */
  hash: string;
  /** Where it was first read from: a URL, a file's absolute path, or "-" (stdin). */
  source: string;
  created_at: string;
  content: string;
}

/** What a listing holds of a fragment. */
export interface FragmentSummary extends Omit<Fragment, 'content'> {
  aliases: string[];
  /** Its length in characters. */
  length: number;
  /** Its first characters, on one line. */
  preview: string;
}

/** A message as a conversation keeps it: fragments by hash, before its own text. */
export type KeptMessage = ChatMessage & { fragments?: string[] | undefined };

/** The most a fragment holds (UTF-8 bytes): the largest body the service takes. */
export const MAX_FRAGMENT_BYTES = 200_000_000;

const HASH = /^[0-9a-f]{64}$/;
const ALIAS = /^[A-Za-z0-9][\w.-]{0,63}$/;

export const fragmentHash = (content: string) => createHash('sha256').update(content).digest('hex');
export const isFragmentAlias = (name: string) => ALIAS.test(name) && !HASH.test(name);

/** The alias, or an `invalid_alias` refusal. */
export function checkFragmentAlias(alias: string): string {
  if (!isFragmentAlias(alias)) throw new FragmentError('invalid_alias', alias, 'an alias is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit, and is no hash');
  return alias;
}

/** A text as a fragment, not kept yet (`FragmentStore.put` keeps it). */
export const unkeptFragment = (content: string, source: string): Fragment => ({ hash: fragmentHash(content), source, created_at: new Date().toISOString(), content });

/** The names of FragmentStoreOptions's members, checked against it both ways (a new option is a name here too). */
const FRAGMENT_STORE_OPTIONS = optionNames<FragmentStoreOptions>()({ dir: 1, env: 1 });

export interface FragmentStoreOptions {
  /** The folder of the fragments; default: `fragments` in the state folder `env` names. */
  dir?: string | undefined;
  /** Where the state folder is found (`ROUTER_STATE_DIR`, `XDG_STATE_HOME`, `HOME`); default: `process.env`. */
  env?: NodeJS.ProcessEnv | undefined;
}

export class FragmentStore {
  readonly dir: string;

  constructor(opts: FragmentStoreOptions = {}) {
    checkOptions('new FragmentStore()', opts, FRAGMENT_STORE_OPTIONS);
    this.dir = opts.dir ?? join(stateHome(opts.env ?? process.env), 'fragments');
  }

  private file(hash: string): string {
    return join(this.dir, `${hash}.json`);
  }

  private aliasFile(alias: string): string {
    return join(this.dir, 'aliases', alias);
  }

  /** Keeps a text (once: one kept already keeps its first source) and returns it as kept. */
  put(content: string, source: string): Fragment {
    const hash = fragmentHash(content);
    if (existsSync(this.file(hash))) {
      try {
        return this.get(hash);
      } catch {
        // A damaged copy is written again below.
      }
    }
    const fragment = unkeptFragment(content, source);
    writeWhole(this.file(hash), JSON.stringify(fragment));
    return fragment;
  }

  /** The fragment of that hash (`FragmentError`: `not_found`, `damaged`). */
  get(hash: string): Fragment {
    if (!HASH.test(hash)) throw new FragmentError('not_found', hash, 'no fragment has that hash');
    let text: string;
    try {
      text = readLocalText(this.file(hash), MAX_FRAGMENT_BYTES * 2);
    } catch {
      throw new FragmentError('not_found', hash, 'no fragment has that hash');
    }
    let f: unknown;
    try {
      f = JSON.parse(text);
    } catch {
      f = undefined;
    }
    if (!isRecord(f) || f.hash !== hash || typeof f.content !== 'string' || typeof f.source !== 'string' || typeof f.created_at !== 'string') throw new FragmentError('damaged', hash, `its file ${this.file(hash)} is damaged`);
    return f as unknown as Fragment;
  }

  /** The hash an alias names (undefined: none). */
  aliasHash(alias: string): string | undefined {
    if (!isFragmentAlias(alias)) return undefined;
    const file = this.aliasFile(alias);
    const hash = readKeptText(file, `alias ${alias} is taken as none`, 4096)?.trim();
    if (hash === undefined || HASH.test(hash)) return hash;
    sayKeptProblem(file, `is damaged (no fragment hash): alias ${alias} is taken as none (router fragments set ${alias} FRAGMENT names one again)`);
    return undefined;
  }

  /** The kept fragment an alias or a hash names (undefined: none). */
  find(ref: string): Fragment | undefined {
    const hash = HASH.test(ref) ? ref : this.aliasHash(ref);
    if (!hash || !existsSync(this.file(hash))) return undefined;
    return this.get(hash);
  }

  /** Names a kept fragment (by hash or another alias); an alias of that name is moved. Returns the hash. */
  setAlias(alias: string, ref: string): string {
    checkFragmentAlias(alias);
    const fragment = this.find(ref);
    if (!fragment) throw new FragmentError('not_found', ref, 'no fragment has that alias or hash');
    writeWhole(this.aliasFile(alias), `${fragment.hash}\n`);
    return fragment.hash;
  }

  /** Removes an alias (`not_found` when there is none); the fragment stays. */
  removeAlias(alias: string): void {
    if (!this.aliasHash(alias)) throw new FragmentError('not_found', alias, 'no fragment has that alias');
    rmSync(this.aliasFile(alias), { force: true });
  }

  /** Every alias, by the hash it names; `damaged` hears of each alias file that names no hash (it is left out). */
  aliases(damaged?: (file: string) => void): Map<string, string[]> {
    const byHash = new Map<string, string[]>();
    let names: string[] = [];
    try {
      names = readdirSync(join(this.dir, 'aliases')).filter((n) => !n.startsWith('.')).sort();
    } catch {
      // No alias yet.
    }
    for (const name of names) {
      const hash = this.aliasHash(name);
      if (hash) byHash.set(hash, [...(byHash.get(hash) ?? []), name]);
      else if (damaged && isFragmentAlias(name) && existsSync(this.aliasFile(name))) damaged(this.aliasFile(name));
    }
    return byHash;
  }

  /** The kept fragments, most recent first, read one at a time; a damaged one (or alias) is left out and its file handed to `damaged`. */
  *list(damaged?: (file: string) => void): Generator<FragmentSummary, void, undefined> {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => /^[0-9a-f]{64}\.json$/.test(n));
    } catch {
      return;
    }
    const aliases = this.aliases(damaged);
    const kept: Omit<FragmentSummary, 'aliases'>[] = [];
    for (const n of names) {
      try {
        const { content, ...rest } = this.get(n.slice(0, 64));
        kept.push({ ...rest, length: content.length, preview: firstWords(content, 100) });
      } catch (err) {
        // Gone since the folder was read, or damaged: said.
        if (err instanceof FragmentError && err.code === 'damaged') damaged?.(this.file(n.slice(0, 64)));
      }
    }
    kept.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.hash < b.hash ? -1 : 1));
    // In the order the docs give: hash, aliases, source, created_at, length, preview.
    for (const { hash, source, created_at, length, preview } of kept) yield { hash, aliases: aliases.get(hash) ?? [], source, created_at, length, preview };
  }

  /** The messages as sent: each kept one's fragments (by hash) before its text, a line apart, as llm joins them; `unkept` are found by hash too. */
  expand(messages: readonly KeptMessage[], unkept: readonly Fragment[] = []): ChatMessage[] {
    return messages.map((m) => {
      if (!('fragments' in m)) return m;
      const { fragments, ...rest } = m;
      const texts = (Array.isArray(fragments) ? fragments : []).map((h) => (unkept.find((f) => f.hash === h) ?? this.get(h)).content);
      if (!texts.length) return rest;
      const content = typeof rest.content === 'string' ? [...texts, ...(rest.content ? [rest.content] : [])].join('\n') : [...texts.map((text) => ({ type: 'text', text })), ...((rest.content as unknown[] | null) ?? [])];
      return { ...rest, content } as ChatMessage;
    });
  }
}
