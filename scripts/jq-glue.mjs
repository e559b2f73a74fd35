// jq-wasm's glue (jq-wasm/dist/build/jq.js) feeds jq's stdin one byte at a time by copying the rest of
// the input (stdinBuffer.slice(1)), and grows stdout and stderr by copying them whole for each byte:
// time grows with the square of the JSON's size (minutes for a few MB). linearJqGlue() rewrites it to
// read stdin at an index and collect stdout/stderr in a buffer that doubles: the same jq, linear IO.
// It fails loudly where the text it replaces is not there (a jq-wasm update): never a silent no-op.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const MARK = '/* router: linear jq IO */';

/** A literal as a pattern that any run of whitespace in the source matches. */
const loose = (text) => new RegExp(text.trim().split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s*'));

const sink = (name) => `const tmp = new Uint8Array(${name}.length + 1);
                tmp.set(${name}, 0);
                tmp[tmp.length - 1] = charCode;
                ${name} = tmp;`;

const REPLACEMENTS = [
  // A byte sink: push() amortised O(1), .length, and the bytes so far (view()).
  ['function toByteArray(str) {', `function byteSink() { let bytes = new Uint8Array(4096), length = 0; return { push(b) { if (length === bytes.length) { const grown = new Uint8Array(bytes.length * 2); grown.set(bytes); bytes = grown; } bytes[length++] = b; }, get length() { return length; }, view() { return bytes.subarray(0, length); } }; }
        let stdinAt = 0;
        function toByteArray(str) {`],
  ['stdinBuffer = toByteArray(stdinString); stdoutBuffer = new Uint8Array(0); stderrBuffer = new Uint8Array(0);', 'stdinBuffer = toByteArray(stdinString); stdinAt = 0; stdoutBuffer = byteSink(); stderrBuffer = byteSink();'],
  ['return fromByteArray(stdoutBuffer).trim();', 'return fromByteArray(stdoutBuffer.view()).trim();'],
  ['const errorString = fromByteArray(stderrBuffer).trim();', 'const errorString = fromByteArray(stderrBuffer.view()).trim();'],
  ['if (stdinBuffer.length > 0) { const byte = stdinBuffer[0]; stdinBuffer = stdinBuffer.slice(1); return byte; } return null;', 'if (stdinAt < stdinBuffer.length) { return stdinBuffer[stdinAt++]; } return null;'],
  [sink('stdoutBuffer'), 'stdoutBuffer.push(charCode);'],
  [sink('stderrBuffer'), 'stderrBuffer.push(charCode);'],
];

/** jq-wasm's glue with linear IO; throws if any text it rewrites is missing or found twice. */
export function linearJqGlue(source) {
  if (source.startsWith(MARK)) return source;
  let out = source;
  for (const [from, to] of REPLACEMENTS) {
    const pattern = loose(from);
    const found = out.match(new RegExp(pattern.source, 'g'))?.length ?? 0;
    if (found !== 1) throw new Error(`jq-wasm's glue changed: expected once, found ${found} times: ${from.split('\n')[0]}`);
    out = out.replace(pattern, () => to);
  }
  if (/stdinBuffer\.slice\(|new Uint8Array\((stdout|stderr)Buffer\.length/.test(out)) throw new Error("jq-wasm's glue changed: a quadratic copy is left");
  return `${MARK}\n${out}`;
}

/** jq-wasm's jq.js, as node resolves it from here. */
export const jqGluePath = () => createRequire(import.meta.url).resolve('jq-wasm/dist/build/jq.js');

/** Rewrites jq-wasm's glue where it is installed (idempotent), so that every way router loads it gets linear IO. */
export function patchInstalledJq(path = jqGluePath()) {
  const source = readFileSync(path, 'utf8');
  const patched = linearJqGlue(source);
  if (patched !== source) writeFileSync(path, patched);
  return path;
}

// `node scripts/jq-glue.mjs` (the first step of npm run build): the modules, the tests and the bundle's source.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) patchInstalledJq();
