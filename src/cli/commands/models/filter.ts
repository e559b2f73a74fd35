/** What `router models` keeps of the list, in what order, and how a row reads. */
import type { Model } from '../../../client/resources/models.js';
import { didYouMean } from '../../../internal/did-you-mean.js';
import { collect } from '../../flags/options.js';
import type { FlagTable, FlagValues } from '../../flags/flags.js';
import { cut } from '../../io/table.js';
import { textWidth } from '../../markdown/runs.js';
import { visible } from '../../../internal/visible.js';
import { modalities } from '../../service/model-catalog.js';

export { modalities };

export const MODEL_COLUMNS = ['id', 'name', 'context', '$/M prompt', '$/M completion', 'modalities'] as const;

/** The flags that filter the list (`router models`). */
export const FILTER_FLAGS = {
  inputModality: { flags: '--input-modality <m>', help: 'only models that take this input (text, image, audio, file, …)' },
  outputModality: { flags: '--output-modality <m>', help: 'only models that produce this output (text, image, audio, embeddings, …)' },
  supports: { flags: '--supports <param>', help: 'only models that support this parameter (tools, response_format, …; repeatable)', parse: collect },
} as const satisfies FlagTable;

type Filters = FlagValues<typeof FILTER_FLAGS>;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** USD per token as a string of the list, as a number (NaN when it is not one). */
const perToken = (m: Model, key: 'prompt' | 'completion'): number => {
  const v = (m.pricing as Record<string, unknown> | undefined)?.[key];
  return typeof v === 'string' || typeof v === 'number' ? Number(v) : NaN;
};

/** Models whose id or name holds every search word, and that pass the modality and parameter filters. */
export function filterModels(models: Model[], search: string[], f: Filters): Model[] {
  const words = search.flatMap((s) => s.toLowerCase().split(/\s+/)).filter(Boolean);
  return models.filter((m) => {
    const text = `${m.id} ${m.name ?? ''}`.toLowerCase();
    if (!words.every((w) => text.includes(w))) return false;
    const { input, output } = modalities(m);
    if (f.inputModality && !input.includes(f.inputModality.toLowerCase())) return false;
    if (f.outputModality && !output.includes(f.outputModality.toLowerCase())) return false;
    const params = strings(m.supported_parameters);
    return (f.supports ?? []).every((p) => params.includes(p));
  });
}

/**
 * The first filter value that no model of the whole list has, as the line that says so; `typo` when
 * a value the list has is close to it ("--supports tool": tools). Undefined when every value is known.
 */
export function unknownFilter(models: Model[], f: Filters): { line: string; typo: boolean } | undefined {
  const known = { input: new Set<string>(), output: new Set<string>(), params: new Set<string>() };
  for (const m of models) {
    const { input, output } = modalities(m);
    input.forEach((v) => known.input.add(v));
    output.forEach((v) => known.output.add(v));
    strings(m.supported_parameters).forEach((v) => known.params.add(v));
  }
  const asked: [string, string | undefined, Set<string>, string][] = [
    ['--input-modality', f.inputModality?.toLowerCase(), known.input, 'takes'],
    ['--output-modality', f.outputModality?.toLowerCase(), known.output, 'produces'],
    ...(f.supports ?? []).map((p): [string, string, Set<string>, string] => ['--supports', p, known.params, 'supports']),
  ];
  for (const [flag, value, set, verb] of asked) {
    if (value === undefined || set.has(value)) continue;
    const near = didYouMean(value, [...set]);
    return { line: `${flag} ${value}: no model in the list ${verb} it${near}`, typo: near !== '' };
  }
  return undefined;
}

/** price: cheapest first (prompt, then completion); context: largest first; name: by name. Unknowns (and prices that vary) last. */
export function sortModels(models: Model[], by?: 'price' | 'context' | 'name'): Model[] {
  const last = (n: number) => (Number.isFinite(n) && n >= 0 ? n : Infinity);
  const out = [...models];
  if (by === 'price') out.sort((a, b) => last(perToken(a, 'prompt')) - last(perToken(b, 'prompt')) || last(perToken(a, 'completion')) - last(perToken(b, 'completion')));
  const context = (m: Model) => (typeof m.context_length === 'number' ? m.context_length : -1);
  if (by === 'context') out.sort((a, b) => context(b) - context(a));
  if (by === 'name') out.sort((a, b) => String(a.name ?? a.id).localeCompare(String(b.name ?? b.id)));
  return out;
}

/**
 * A price per token as USD per million tokens: "1.50", "0.02", "0.015", "0.0000001" (below 1, two
 * significant digits: a price that is not 0 never reads as 0), `unknown` when the list gives none,
 * "varies" for a negative one: the service lists a router (openrouter/auto) at "-1", its price being
 * that of the model it picks (`--json` gives the list's "-1" as it is).
 */
export function perMillion(n: number, unknown = '-'): string {
  if (!Number.isFinite(n)) return unknown;
  if (n < 0) return 'varies';
  const m = n * 1e6;
  if (m === 0 || Math.abs(m) >= 1) return m.toFixed(2);
  const decimals = Math.min(100, Math.max(2, 1 - Math.floor(Math.log10(Math.abs(m)))));
  return m.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1');
}

/** A model's row; a field the list does not give is `unknown`: "-" on a terminal, empty piped (a field a script can test). */
export function modelRow(m: Model, unknown = '-'): string[] {
  const { input, output } = modalities(m);
  const shown = input.length || output.length ? `${input.join('+')}->${output.join('+')}` : unknown;
  const context = typeof m.context_length === 'number' ? String(m.context_length) : unknown;
  return [m.id, String(m.name ?? m.id), context, perMillion(perToken(m, 'prompt'), unknown), perMillion(perToken(m, 'completion'), unknown), shown];
}

/** The least of the last column (modalities) kept in sight when names are shortened. */
const LAST_COLUMN_ROOM = 12;
/** A name shorter than this says nothing: the column is left out instead. */
const LEAST_NAME = 8;

/**
 * The table's columns fitted to the window: names shortened (with "…"), or left out, so that the id
 * and the prices stay in sight. The table cuts only its lines' end, and long names (OpenRouter's
 * "Anthropic: Claude …") would push the prices out of it.
 */
export function fitColumns(given: string[][], width: number): { head: string[]; rows: string[][] } {
  const NAME = 1;
  const head: string[] = [...MODEL_COLUMNS];
  // Measured as the table shows them: control characters escaped, wide letters two columns.
  const rows = given.map((r) => r.map((c) => visible(c)));
  const widths = head.map((h, i) => Math.max(textWidth(h), ...rows.map((r) => textWidth(r[i]!))));
  const others = widths.reduce((sum, w, i) => (i === NAME || i === widths.length - 1 ? sum : sum + w), 0) + 2 * (widths.length - 1);
  const room = width - others - Math.min(LAST_COLUMN_ROOM, widths.at(-1)!);
  if (widths[NAME]! <= room) return { head, rows };
  const without = <T>(cells: T[]) => cells.filter((_, i) => i !== NAME);
  if (room < LEAST_NAME) return { head: without(head), rows: rows.map(without) };
  return { head, rows: rows.map((r) => r.map((cell, i) => (i === NAME ? cut(cell, room) : cell))) };
}
