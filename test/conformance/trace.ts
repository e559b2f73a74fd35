/**
 * The rule trace: the table of spec rules in docs/conformance.md and the tests that check each
 * rule, found by their `spec: <id>, <id>` markers (a test title or a comment in the test).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const DOC = join(ROOT, 'docs', 'conformance.md');
const ID = String.raw`[a-z][a-z0-9-]*\.[a-z0-9.-]*[a-z0-9]`;
const MARKER = new RegExp(String.raw`spec: (${ID}(?:, ${ID})*)`, 'g');
const ROW = new RegExp(String.raw`^\| \`(${ID})\` \| (.+?) \| (.*?) \|$`);

export interface TraceRow {
  id: string;
  rule: string;
  /** Test files named in the table. */
  listed: string[];
  /** Test files that carry the rule's marker. */
  found: string[];
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

export function markers(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const file of testFiles(join(ROOT, 'test'))) {
    const name = relative(ROOT, file);
    for (const m of readFileSync(file, 'utf8').matchAll(MARKER)) {
      for (const id of m[1]!.split(', ')) {
        if (!found.has(id)) found.set(id, new Set());
        found.get(id)!.add(name);
      }
    }
  }
  return found;
}

export function readTrace(): { rows: TraceRow[]; unknown: string[] } {
  const found = markers();
  const rows: TraceRow[] = [];
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const m = ROW.exec(line);
    if (!m) continue;
    const listed = [...m[3]!.matchAll(/`(test\/[^`]+)`/g)].map((x) => x[1]!).sort();
    rows.push({ id: m[1]!, rule: m[2]!, listed, found: [...(found.get(m[1]!) ?? [])].sort() });
  }
  const known = new Set(rows.map((r) => r.id));
  return { rows, unknown: [...found.keys()].filter((id) => !known.has(id)).sort() };
}

/** What is wrong with the trace: untested rules, markers of rules not in the table, tables that name the wrong files. */
export function traceProblems(): string[] {
  const { rows, unknown } = readTrace();
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.id)) problems.push(`${r.id}: listed twice`);
    seen.add(r.id);
    if (r.found.length === 0) problems.push(`${r.id}: untested`);
    else if (r.listed.join(' ') !== r.found.join(' ')) problems.push(`${r.id}: the table names ${r.listed.join(', ') || 'nothing'}, the markers are in ${r.found.join(', ')}`);
  }
  for (const id of unknown) problems.push(`${id}: a test marks it, the table has no such rule`);
  return problems;
}
