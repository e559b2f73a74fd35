import { readFileSync } from 'node:fs';
import { isFiniteNumber, isRecord } from '../../internal/shape.js';
import type { KeyRecord, Workspace } from './store-api.js';

/** A charge for a generation whose record may not be on disk yet: its workspace, what it came to, the key's hash and when (ms). */
export interface Unrecorded {
  w: string;
  c: number;
  kh?: string;
  t?: number;
  /** The model and provider that answered, where the charge named them. */
  m?: string;
  p?: string;
}

/** What `<state>/state.json` holds. */
export interface StateFile {
  keys: KeyRecord[];
  workspaces: Record<string, Workspace>;
  clock_offset_ms: number;
  /** Charges made once each (a batch's finalized cost), by key, saved with the balances they moved. */
  charges?: Record<string, number>;
  /** The last entry of the charges journal this file holds, and the first journal segment it lacks (charge-journal.ts). */
  journal_seq?: number;
  journal_segment?: number;
  /** Requests' holds open at this save, by id: a start gives back those the journal does not settle. */
  holds?: Record<string, { w: string; c: number }>;
  /** Generations charged for whose records were not yet known written at this save, by id: a start makes those it lacks (store.ts). */
  unrecorded?: Record<string, Unrecorded>;
  /** The gateway's estimates of unbounded requests, by endpoint and model, at this save (Store.estimates). */
  estimates?: Record<string, number>;
}

/** The state file, or an error that names it and the position, never its contents (it holds keys). */
export function readState(file: string): StateFile {
  let state: unknown;
  try {
    state = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new Error(`${file} is not valid JSON${at ? ` (at position ${at})` : ''}: fix it, or move it away to start with new keys`, { cause: err });
  }
  const problem = stateProblem(state);
  if (problem) throw new Error(`${file} is not an emulator state (${problem}): fix it, or move it away to start with new keys`);
  const dropped = dropBadEntries(state as StateFile);
  if (dropped.length) process.stderr.write(`emulator: warning: ${file}: dropped ${dropped.length === 1 ? 'an entry' : `${dropped.length} entries`} that could not be read (${listed(dropped)}); the rest is loaded\n`);
  return state as StateFile;
}

/** The first few of `names`, and how many more. */
const listed = (names: string[]) => (names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', '));

/** An amount as the tables keep it: finite and not below zero (a hold or a charge never is). */
const isAmount = (v: unknown) => isFiniteNumber(v) && v >= 0;

/** A hold as a start gives it back: a whole-number id, a workspace of this state, an amount. */
const isHold = (id: string, held: unknown, state: StateFile) => /^\d+$/.test(id) && isRecord(held) && typeof held.w === 'string' && Object.hasOwn(state.workspaces, held.w) && isAmount(held.c);

/**
 * Removes the entries of the per-entry tables (`estimates`, `charges`, `holds`: each entry stands on
 * its own, and one lost costs at most that entry) whose value cannot be used, as `section["name"]`:
 * one edited wrong stops nothing else from loading. Keys and workspaces are not dropped so: the next
 * save would lose them for good (stateProblem names them instead).
 */
function dropBadEntries(state: StateFile): string[] {
  const dropped: string[] = [];
  const check = (section: 'estimates' | 'charges' | 'holds' | 'unrecorded', good: (id: string, value: unknown) => boolean) => {
    const table = state[section] as Record<string, unknown> | undefined;
    for (const [id, value] of Object.entries(table ?? {})) {
      if (good(id, value)) continue;
      delete table![id];
      dropped.push(`${section}[${JSON.stringify(id)}]`);
    }
  };
  // A negative one would be given back as a charge: a hold of -5 settled at start took $5.
  check('estimates', (_id, v) => isAmount(v));
  check('charges', (_id, v) => isAmount(v));
  check('holds', (id, v) => isHold(id, v, state));
  check('unrecorded', (_id, v) => isRecord(v) && typeof v.w === 'string' && Object.hasOwn(state.workspaces, v.w) && isAmount(v.c));
  return dropped;
}

/** What is wrong with the shape of a state file edited by hand, if anything (names places, never a key). */
function stateProblem(state: unknown): string | undefined {
  if (!isRecord(state)) return 'not a JSON object';
  if (!Array.isArray(state.keys)) return '"keys" is not a list';
  const bad = state.keys.findIndex((k) => !isRecord(k) || typeof k.key !== 'string' || typeof k.workspace !== 'string' || !['standard', 'management', 'operator'].includes(k.kind as string));
  if (bad !== -1) return `keys[${bad}] is not a key record`;
  if (!isRecord(state.workspaces)) return '"workspaces" is not an object';
  for (const [id, w] of Object.entries(state.workspaces)) {
    if (!isRecord(w) || !isFiniteNumber(w.total_credits) || !isFiniteNumber(w.total_usage)) return `workspace "${id}" is not a workspace record`;
  }
  // The operator's key alone stands outside every workspace (OPERATOR_WORKSPACE).
  const orphan = state.keys.findIndex((k) => k.kind !== 'operator' && !Object.hasOwn(state.workspaces as object, k.workspace as string));
  if (orphan !== -1) return `keys[${orphan}] names a workspace the file lacks`;
  if (!isFiniteNumber(state.clock_offset_ms)) return '"clock_offset_ms" is not a number';
  if (state.journal_seq !== undefined && !isFiniteNumber(state.journal_seq)) return '"journal_seq" is not a number';
  if (state.journal_segment !== undefined && !(isFiniteNumber(state.journal_segment) && Number.isInteger(state.journal_segment) && state.journal_segment >= 0)) return '"journal_segment" is not a whole number';
  if (state.holds !== undefined && !isRecord(state.holds)) return '"holds" is not an object';
  if (state.estimates !== undefined && !isRecord(state.estimates)) return '"estimates" is not an object';
  if (state.charges !== undefined && !isRecord(state.charges)) return '"charges" is not an object';
  if (state.unrecorded !== undefined && !isRecord(state.unrecorded)) return '"unrecorded" is not an object';
  return undefined;
}
