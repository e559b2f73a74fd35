import { readFileSync } from 'node:fs';
import { isFiniteNumber, isRecord } from '../../internal/shape.js';
import type { KeyRecord, Workspace } from './store-api.js';

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
  return state as StateFile;
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
  if (!isFiniteNumber(state.clock_offset_ms)) return '"clock_offset_ms" is not a number';
  if (state.journal_seq !== undefined && !isFiniteNumber(state.journal_seq)) return '"journal_seq" is not a number';
  if (state.journal_segment !== undefined && !(isFiniteNumber(state.journal_segment) && Number.isInteger(state.journal_segment) && state.journal_segment >= 0)) return '"journal_segment" is not a whole number';
  if (state.holds !== undefined && !isRecord(state.holds)) return '"holds" is not an object';
  if (state.estimates !== undefined && (!isRecord(state.estimates) || !Object.values(state.estimates).every(isFiniteNumber))) return '"estimates" is not an object of numbers';
  if (state.charges !== undefined && (!isRecord(state.charges) || !Object.values(state.charges).every(isFiniteNumber))) return '"charges" is not an object of numbers';
  return undefined;
}
