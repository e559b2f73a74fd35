/** Code blocks highlighted by highlight.js (its core and the common languages, loaded on first use). */
import { createRequire } from 'node:module';
import type { Run, Style } from './runs.js';

interface Hljs {
  registerLanguage(name: string, lang: unknown): void;
  registerAliases(aliases: string[], o: { languageName: string }): void;
  getLanguage(name: string): unknown;
  highlight(code: string, o: { language: string; ignoreIllegals: boolean }): { value: string };
}

/** Languages answers use most, and the names a fence gives them. */
const LANGUAGES: Record<string, string[]> = {
  javascript: ['js', 'jsx', 'mjs', 'cjs', 'node'],
  typescript: ['ts', 'tsx'],
  python: ['py', 'python3'],
  bash: ['sh', 'shell', 'zsh', 'console'],
  json: ['jsonc'],
  go: ['golang'],
  rust: ['rs'],
  java: [],
  c: ['h'],
  cpp: ['c++', 'cc', 'hpp'],
  csharp: ['cs', 'c#'],
  sql: [],
  yaml: ['yml'],
  xml: ['html', 'svg'],
  css: [],
  diff: ['patch'],
  ruby: ['rb'],
  php: [],
  kotlin: ['kt'],
  swift: [],
  markdown: ['md'],
  ini: ['toml'],
  dockerfile: ['docker'],
};

let hljs: Hljs | undefined;

function load(): Hljs {
  if (hljs) return hljs;
  // CommonJS files of highlight.js, each language its own: only these are read.
  const require = createRequire(import.meta.url);
  const core = require('highlight.js/lib/core') as Hljs;
  for (const [name, aliases] of Object.entries(LANGUAGES)) {
    core.registerLanguage(name, require(`highlight.js/lib/languages/${name}`));
    core.registerAliases(aliases, { languageName: name });
  }
  return (hljs = core);
}

const CLASS_STYLE: [RegExp, Style][] = [
  [/^hljs-(keyword|built_in|literal|selector-tag|doctag|section)/, 'kw'],
  [/^hljs-(string|regexp|char|addition|symbol|template)/, 'str'],
  [/^hljs-(number|variable\.constant)/, 'num'],
  [/^hljs-(comment|quote|deletion)/, 'com'],
  [/^hljs-(title\.function|function)/, 'fn'],
  [/^hljs-(type|title|class|attr|attribute|property|name|tag)/, 'type'],
  [/^hljs-(meta|subst|params)/, 'meta'],
];

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'" };
const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|#x27|#39);/g, (e) => ENTITIES[e]!);

/** highlight.js's HTML (spans with classes) read back as styled runs. */
function htmlRuns(html: string): Run[] {
  const runs: Run[] = [];
  const stack: (Style | undefined)[] = [];
  for (const part of html.split(/(<span class="[^"]*">|<\/span>)/)) {
    if (!part) continue;
    const open = /^<span class="([^"]*)">$/.exec(part);
    if (open) stack.push(CLASS_STYLE.find(([re]) => re.test(open[1]!))?.[1]);
    else if (part === '</span>') stack.pop();
    else {
      const style = [...stack].reverse().find(Boolean);
      runs.push({ text: unescape(part), styles: style ? [style] : [] });
    }
  }
  return runs;
}

/** The code's lines as styled runs; a language highlight.js does not know is left plain. */
export function highlightLines(code: string, lang: string, color: boolean): Run[][] {
  const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  let runs: Run[] = [{ text: code, styles: [] }];
  if (color && name) {
    const h = load();
    if (h.getLanguage(name)) runs = htmlRuns(h.highlight(code, { language: name, ignoreIllegals: true }).value);
  }
  const lines: Run[][] = [[]];
  for (const run of runs) {
    run.text.split('\n').forEach((piece, i) => {
      if (i > 0) lines.push([]);
      if (piece) lines[lines.length - 1]!.push({ text: piece, styles: run.styles });
    });
  }
  return lines;
}
