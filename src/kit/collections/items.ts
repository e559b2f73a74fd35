/**
 * Items to embed, as llm's embed-multi reads them: JSONL, a JSON array, CSV or TSV (a header row; the
 * first column the id, the others the content, joined by spaces), or the text files under a folder that
 * match a glob (the id the file's path in the folder).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { isRecord } from '../../internal/shape.js';
import { decodeText, notTextReason } from '../../internal/not-text.js';
import { CollectionError } from '../errors.js';
import type { EmbedItem } from './embed.js';

export type ItemsFormat = 'jsonl' | 'json' | 'csv' | 'tsv';

/** The format a file's name says, if it says one. */
export function formatOf(file: string): ItemsFormat | undefined {
  const ext = /\.(jsonl|ndjson|json|csv|tsv)$/i.exec(file)?.[1]?.toLowerCase();
  return ext === 'ndjson' ? 'jsonl' : (ext as ItemsFormat | undefined);
}

/** A first column's name as a header names an id; any other first row may be an item the file starts with. */
const ID_HEADER = /^(?:id|key|name|slug|uuid|guid|path|file(?:name)?|url|uri|sku|code|[a-z]*[ _-]?(?:id|key|name))$/i;

/**
 * The items of a file's text (`source` names it in errors; `collection` is the one they are for).
 * `onNote` hears of a CSV/TSV first row taken as the header that reads like an item (a file without one).
 */
export function itemsFromText(text: string, format: ItemsFormat, source: string, collection: string, onNote?: (text: string) => void): EmbedItem[] {
  const fail = (where: string, why: string) => new CollectionError('invalid_items', collection, `${source}${where}: ${why}`);
  if (format === 'csv' || format === 'tsv') {
    const [header, ...rows] = parseDelimited(text, format === 'csv' ? ',' : '\t').filter((r) => r.some((c) => c.trim()));
    if (!header || header.length < 2) throw fail('', 'needs a header row of at least two columns: the id, then the content');
    if (!ID_HEADER.test(header[0]!.trim())) {
      const shown = header.map((c) => JSON.stringify(c.length > 30 ? `${c.slice(0, 30)}…` : c)).join(', ');
      onNote?.(`${source}: its first row (${shown}) is read as the header, not as an item; a file without a header row loses it (start the file with one, e.g. id,content)`);
    }
    return rows.map((r, i) => {
      const item = { id: r[0] ?? '', content: r.slice(1).filter((c) => c).join(' ') };
      if (!item.id.trim()) throw fail(` row ${i + 2}`, 'the id (the first column) is blank');
      return item;
    });
  }
  let records: unknown[];
  if (format === 'json') {
    try {
      records = JSON.parse(text);
    } catch (err) {
      throw fail('', `not valid JSON (${(err as Error).message})`);
    }
    if (!Array.isArray(records)) throw fail('', 'is not a JSON array of objects');
  } else {
    records = text.split(/\r?\n/).map((line, i) => {
      if (!line.trim()) return undefined;
      try {
        return JSON.parse(line);
      } catch {
        throw fail(` line ${i + 1}`, 'not valid JSON');
      }
    });
  }
  const items: EmbedItem[] = [];
  records.forEach((r, i) => {
    if (r === undefined && format === 'jsonl') return;
    const where = format === 'json' ? ` item ${i + 1}` : ` line ${i + 1}`;
    if (!isRecord(r)) throw fail(where, 'not an object with "id" and the content');
    const { id, metadata, content, ...rest } = r;
    if (typeof id !== 'string' && typeof id !== 'number') throw fail(where, 'no "id" (a string or a number)');
    if (metadata !== undefined && !isRecord(metadata)) throw fail(where, '"metadata" is not an object');
    const text = typeof content === 'string' ? content : Object.values(rest).filter((v) => typeof v === 'string' || typeof v === 'number').join(' ');
    items.push({ id: String(id), content: text, ...(metadata !== undefined ? { metadata } : {}) });
  });
  return items;
}

/** RFC 4180 fields: quoted fields may hold the delimiter, newlines and doubled quotes. */
function parseDelimited(text: string, delimiter: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted) {
      if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && !field) quoted = true;
    else if (c === delimiter) endField();
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else field += c;
  }
  if (field || row.length) endRow();
  return rows;
}

/** A glob as a test of a path (with "/" between its folders): `**` any folders, `*` and `?` within one, `{a,b}` either. */
export function globTest(glob: string): (path: string) => boolean {
  let re = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') {
      re += '(?:';
      braces++;
    } else if (c === '}' && braces) {
      re += ')';
      braces--;
    }
    else if (c === ',' && braces) re += '|';
    else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  const test = new RegExp(`^${re}$`);
  return (path) => test.test(path);
}

/** Larger files are left out: no text file to embed is this large. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** The files under `dir` that `glob` matches, each an item (its id the path under `dir`); `skipped`: files not read, and why. */
export function itemsFromFiles(dir: string, glob: string, prefix = ''): { items: EmbedItem[]; skipped: { path: string; why: string }[] } {
  const matches = globTest(glob);
  const items: EmbedItem[] = [];
  const skipped: { path: string; why: string }[] = [];
  const walk = (folder: string) => {
    for (const d of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, d.name);
      if (d.isDirectory()) walk(path);
      const rel = relative(dir, path).split(sep).join('/');
      if (!d.isFile() || !matches(rel)) continue;
      try {
        if (statSync(path).size > MAX_FILE_BYTES) skipped.push({ path, why: `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB` });
        else {
          const bytes = readFileSync(path);
          const notText = notTextReason(bytes);
          const content = notText ? '' : decodeText(bytes);
          if (notText) skipped.push({ path, why: `not UTF-8 text (${notText})` });
          else if (content.trim()) items.push({ id: prefix + rel, content });
          else skipped.push({ path, why: 'empty' });
        }
      } catch (err) {
        skipped.push({ path, why: (err as Error).message });
      }
    }
  };
  walk(dir);
  return { items, skipped };
}
