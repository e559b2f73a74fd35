import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layering of docs/architecture.md, checked on the source.
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every relative import (static, dynamic, and type-only), as paths under src/; `typeOnly`: `import type`/`export type`. */
function imports(file: string): { path: string; typeOnly: boolean }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)(\s+type\b)?[^'";]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/gm)].map((m) => ({
    path: relative(SRC, resolve(dirname(file), (m[2] ?? m[3]!).replace(/\.js$/, '.ts'))),
    typeOnly: !!m[1],
  }));
}

const files = sources(SRC);
const importsOf = new Map(files.map((f) => [relative(SRC, f), imports(f)]));
const graph = new Map([...importsOf].map(([f, deps]) => [f, deps.map((d) => d.path)]));
const layer = (path: string) => path.split('/')[0]!;
/** The folder of a file under src/cli (`cli` for its root), undefined elsewhere. */
const cliFolder = (path: string) => (path.startsWith('cli/') ? (path.split('/').length === 2 ? 'cli' : path.split('/')[1]!) : undefined);

/**
 * A row of docs/architecture.md's table read as a rule: what a folder may import, `any` (every folder of `cli`), and the
 * notes some entries carry: `(types only)` (import type alone), `(only from `FILE`)` (that file alone imports it).
 */
interface Row {
  may: string[];
  any: boolean;
  typesOnly: string[];
  onlyFrom: Record<string, string>;
}

/** The table's `src/X` rows (the layers, by X) and `cli/X` rows (src/cli's folders; `cli/*.ts`, its root, as `cli`). */
function docRows(text: string): { layers: Map<string, Row>; cli: Map<string, Row>; unread: string[] } {
  const layers = new Map<string, Row>();
  const cli = new Map<string, Row>();
  const unread: string[] = [];
  for (const line of text.split('\n')) {
    const cells = /^\| `((?:src|cli)\/[^`]*)` \|.*\| ([^|]+) \|$/.exec(line);
    if (!cells) continue;
    const row: Row = { may: [], any: false, typesOnly: [], onlyFrom: {} };
    for (const item of cells[2]!.trim() === 'nothing' ? [] : cells[2]!.split(/, (?![^(]*\))/)) {
      const m = /^(?:`(\w+)`|(the root)|(any of `cli`))(?: \((?:(types only)|only from `([^`]+)`)\))?$/.exec(item.trim());
      if (!m) {
        unread.push(`${cells[1]}: ${item}`);
        continue;
      }
      if (m[3]) row.any = true;
      const name = m[1] ?? (m[2] ? 'cli' : undefined);
      if (name) row.may.push(name);
      if (name && m[4]) row.typesOnly.push(name);
      if (name && m[5]) row.onlyFrom[name] = m[5];
    }
    const [top, folder] = cells[1]!.split('/');
    if (top === 'src') layers.set(folder!, row);
    else cli.set(folder === '*.ts' ? 'cli' : folder!, row);
  }
  return { layers, cli, unread };
}

const DOC = docRows(readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8'));
const folders = (dir: string) => readdirSync(dir).filter((n) => statSync(join(dir, n)).isDirectory()).sort();
/** What a layer may import (besides itself), as its row says. */
const allowed = (from: string): string[] => DOC.layers.get(from)?.may ?? [];
/** Inside src/cli: what a folder may import of the CLI (`cli`: the root); undefined for a row of `any of `cli``. */
const cliAllowed = (from: string): string[] | undefined => (DOC.cli.get(from)?.any ? undefined : (DOC.cli.get(from)?.may ?? []));

describe('architecture', () => {
  it('no import circles, type-only imports included', () => {
    const cycles: string[] = [];
    const state = new Map<string, 1 | 2>();
    const stack: string[] = [];
    const visit = (n: string) => {
      state.set(n, 1);
      stack.push(n);
      for (const d of graph.get(n) ?? []) {
        if (state.get(d) === 1) cycles.push([...stack.slice(stack.indexOf(d)), d].join(' -> '));
        else if (!state.has(d)) visit(d);
      }
      stack.pop();
      state.set(n, 2);
    };
    for (const f of graph.keys()) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it('each layer imports only what its row in docs/architecture.md says', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      for (const d of deps) if (layer(d) !== layer(file) && !allowed(layer(file)).includes(layer(d))) wrong.push(`${file} -> ${d}`);
    }
    expect(wrong).toEqual([]);
  });

  it('inside src/cli each folder imports only what its row in docs/architecture.md says', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const from = cliFolder(file);
      const may = from === undefined ? undefined : cliAllowed(from);
      if (may === undefined) continue;
      for (const d of deps) {
        const to = cliFolder(d);
        if (to !== undefined && to !== from && !may.includes(to)) wrong.push(`${file} -> ${d}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('inside src/cli no two folders import each other (the root and commands, which take any, aside)', () => {
    const edges = new Set<string>();
    for (const [file, deps] of graph) {
      const from = cliFolder(file);
      if (from === undefined || from === 'cli' || from === 'commands') continue;
      for (const d of deps) {
        const to = cliFolder(d);
        if (to !== undefined && to !== from && to !== 'cli' && to !== 'commands') edges.add(`${from} -> ${to}`);
      }
    }
    const both = [...edges].filter((e) => edges.has(e.split(' -> ').reverse().join(' -> ')));
    expect(both).toEqual([]);
    const listedBoth = [...DOC.cli.keys()].flatMap((from) => (cliAllowed(from) ?? []).filter((to) => cliAllowed(to)?.includes(from)).map((to) => `${from} <-> ${to}`));
    expect(listedBoth).toEqual([]);
  });

  it('src/cli keeps at most 15 loose files at its root, the rest in folders by what they do', () => {
    const loose = readdirSync(join(SRC, 'cli')).filter((n) => statSync(join(SRC, 'cli', n)).isFile());
    expect(loose.length, loose.join(' ')).toBeLessThanOrEqual(15);
  });

  it('the emulator is reached from the CLI only by the serve command', () => {
    const users = [...graph].filter(([f, deps]) => layer(f) === 'cli' && deps.some((d) => layer(d) === 'emulator')).map(([f]) => f);
    expect(users).toEqual(['cli/commands/serve.ts']);
  });

  // serve runs outside hearingKeptProblems (its readsNoKeptFiles): a kept file's problem read in the emulator would go unsaid.
  it('the emulator reaches no reader of kept files (internal/kept-state.ts)', () => {
    const reached = new Set<string>();
    const visit = (f: string): void => void (!reached.has(f) && reached.add(f) && (graph.get(f) ?? []).forEach(visit));
    visit('emulator/server.ts');
    expect(reached.size).toBeGreaterThan(100);
    expect(reached.has('internal/kept-state.ts')).toBe(false);
  });

  it('a note on a row holds: `(types only)` imports are `import type`, `(only from FILE)` is imported by that file alone', () => {
    const wrong: string[] = [];
    for (const [from, row] of DOC.layers) {
      for (const [file, deps] of importsOf) {
        if (layer(file) !== from) continue;
        for (const d of deps) {
          const to = layer(d.path);
          if (row.typesOnly.includes(to) && !d.typeOnly) wrong.push(`${file} -> ${d.path}: not import type`);
          if (row.onlyFrom[to] !== undefined && file !== `${from}/${row.onlyFrom[to]}`) wrong.push(`${file} -> ${d.path}: only ${row.onlyFrom[to]} may`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(DOC.layers.get('emulator')?.typesOnly).toEqual(['client']);
    expect(DOC.layers.get('cli')?.onlyFrom).toEqual({ emulator: 'commands/serve.ts' });
  });

  it('docs/architecture.md has a row for every folder of src/ and of src/cli, each read as a rule, and none for a folder not there', () => {
    expect(DOC.unread).toEqual([]);
    expect([...DOC.layers.keys()].sort()).toEqual(folders(SRC));
    expect([...DOC.cli.keys()].sort()).toEqual(['cli', ...folders(join(SRC, 'cli'))].sort());
  });

  it('each row says no more than the code imports: every import it allows is one a file makes', () => {
    const used = new Set([...graph].flatMap(([file, deps]) => deps.flatMap((d) => {
      const [a, b] = [cliFolder(file), cliFolder(d)];
      return [`${layer(file)} -> ${layer(d)}`, ...(a !== undefined && b !== undefined ? [`cli/${a} -> ${b}`] : [])];
    })));
    const unused = [
      ...[...DOC.layers].flatMap(([from, row]) => row.may.map((to) => `${from} -> ${to}`)),
      ...[...DOC.cli].flatMap(([from, row]) => row.may.map((to) => `cli/${from} -> ${to}`)),
    ].filter((e) => !used.has(e));
    expect(unused).toEqual([]);
  });

  // What no row may allow, whatever the doc says: the layering the project promises (cli -> kit -> client <- emulator).
  it('no row loosens the layering: nothing imports cli, only cli imports the emulator, client stands on internal alone', () => {
    const loosened: string[] = [];
    for (const [from, row] of DOC.layers) {
      for (const to of row.may) {
        if (to === 'cli') loosened.push(`${from} -> cli: nothing imports the CLI`);
        if (to === 'emulator' && from !== 'cli') loosened.push(`${from} -> emulator: only the CLI starts it`);
        if ((from === 'client' && to !== 'internal') || from === 'internal') loosened.push(`${from} -> ${to}: the library's core stands alone`);
      }
    }
    expect(loosened).toEqual([]);
    // And no circle among the rows: a layer below never imports one above.
    const circle = (rows: Map<string, Row>, from: string, seen: string[]): string[] =>
      seen.includes(from) ? [[...seen, from].join(' -> ')] : (rows.get(from)?.may ?? []).filter((to) => to !== from).flatMap((to) => circle(rows, to, [...seen, from]));
    expect([...DOC.layers.keys()].flatMap((l) => circle(DOC.layers, l, []))).toEqual([]);
  });

  it('docs/architecture.md keeps its lines under 200 characters', () => {
    const long = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8').split('\n').map((l, i) => [i + 1, l.length] as const).filter(([, n]) => n >= 200);
    expect(long).toEqual([]);
  });

  it('src/kit does no terminal IO and chooses no exit codes', () => {
    const found = files.filter((f) => relative(SRC, f).startsWith('kit/')).filter((f) => /process\.(stdout|stderr|exit)|console\.|exitCode/.test(readFileSync(f, 'utf8')));
    expect(found.map((f) => relative(SRC, f))).toEqual([]);
  });

  it('src/kit changes no process-wide state: no working folder or environment set, a handler on the process only for a while', () => {
    const found = files.filter((f) => relative(SRC, f).startsWith('kit/')).flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      // An 'exit' handler that ends a tool's processes is taken off again when they end.
      const lasting = /process\.(on|once)\(/.test(text) && !/process\.removeListener\(/.test(text) ? ['a process handler never removed'] : [];
      return [...lasting, ...[/process\.(chdir|umask|setUncaughtExceptionCaptureCallback)\(/, /process\.env(\.\w+|\[[^\]]+\])\s*=[^=]/].filter((re) => re.test(text)).map((re) => re.source)].map((what) => `${relative(SRC, f)}: ${what}`);
    });
    expect(found).toEqual([]);
  });

  it('src/kit\'s errors become exit codes in one place: no file of src/cli but kit-words.ts imports a kit error and an exit code', () => {
    const kitError = /import \{[^}]*\b(\w+Error)\b[^}]*\} from '[./]*kit\/(errors|tool)\.js'/;
    const found = files
      .filter((f) => relative(SRC, f).startsWith('cli/') && !f.endsWith('kit-words.ts'))
      .filter((f) => kitError.test(readFileSync(f, 'utf8')) && /\bEXIT\./.test(readFileSync(f, 'utf8')));
    expect(found.map((f) => relative(SRC, f))).toEqual([]);
  });

  it('src/internal is not part of the public client surface', () => {
    expect(readFileSync(join(SRC, 'client', 'index.ts'), 'utf8')).not.toMatch(/internal\//);
  });

  it('no source file over 300 lines', () => {
    const long = files.map((f) => [relative(SRC, f), readFileSync(f, 'utf8').split('\n').length] as const).filter(([, n]) => n > 300);
    expect(long).toEqual([]);
  });

  it('nothing under src/ changes process-wide state: no V8 flags, no module-loader patch, no WebAssembly of its own; undici\'s private paths in one place', () => {
    // client/undici.ts loads undici's dispatchers without its entry point, which sets node's global
    // dispatcher (test/e2e/library-host-process.test.ts), and falls back to it: no other file may lean on them.
    const privateUndici = /['"]undici\/lib\//;
    const found = files.flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      return [/setFlagsFromString/, /Module\._load|_load\s*=/, privateUndici, /new WebAssembly\./]
        .filter((re) => re.test(text) && !(re === privateUndici && relative(SRC, f) === join('client', 'undici.ts')))
        .map((re) => `${relative(SRC, f)}: ${re.source}`);
    });
    expect(found).toEqual([]);
  });
});
