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

/** Every relative import (static, dynamic, and type-only), as paths under src/. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/^(?:import|export)[^'";]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/gm)].map((m) => m[1] ?? m[2]!);
  return specs.map((s) => relative(SRC, resolve(dirname(file), s.replace(/\.js$/, '.ts'))));
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [relative(SRC, f), imports(f)]));
const layer = (path: string) => path.split('/')[0]!;

/** What each folder may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  internal: [],
  client: ['internal'],
  config: ['internal'],
  emulator: ['internal', 'client'],
  batch: ['client', 'config', 'internal'],
  kit: ['client', 'config', 'internal'],
  cli: ['client', 'config', 'internal', 'emulator', 'batch', 'kit'],
};

/** Inside src/cli: what each folder may import of the CLI (its root, the spine, is `cli`); the root and `commands` take any. */
const CLI_ALLOWED: Record<string, string[]> = {
  flags: ['cli'],
  io: ['cli', 'flags', 'markdown'],
  markdown: [],
  service: ['cli'],
  saved: ['cli', 'flags', 'io', 'commands'],
  spend: ['cli', 'flags', 'service'],
  answers: ['cli', 'flags', 'io'],
  tools: ['cli', 'io', 'answers', 'service'],
};
/** The folder of a file under src/cli (`cli` for its root), undefined elsewhere. */
const cliFolder = (path: string) => (path.startsWith('cli/') ? (path.split('/').length === 2 ? 'cli' : path.split('/')[1]!) : undefined);

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

  it('each layer imports only the layers below it', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      for (const d of deps) if (layer(d) !== layer(file) && !ALLOWED[layer(file)]!.includes(layer(d))) wrong.push(`${file} -> ${d}`);
    }
    expect(wrong).toEqual([]);
  });

  it('inside src/cli each folder imports only what its row in docs/architecture.md says', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const from = cliFolder(file);
      if (from === undefined || from === 'cli' || from === 'commands') continue;
      for (const d of deps) {
        const to = cliFolder(d);
        if (to !== undefined && to !== from && !(CLI_ALLOWED[from] ?? []).includes(to)) wrong.push(`${file} -> ${d}`);
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
    const listedBoth = Object.entries(CLI_ALLOWED).flatMap(([from, tos]) => tos.filter((to) => CLI_ALLOWED[to]?.includes(from)).map((to) => `${from} <-> ${to}`));
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
