// jq-wasm's glue (jq-wasm/dist/build/jq.js) feeds jq's stdin one byte at a time by copying the rest of
// the input (stdinBuffer.slice(1)), and grows stdout and stderr by copying them whole for each byte:
// time grows with the square of the JSON's size (minutes for a few MB). linearJqGlue() rewrites it to
// read stdin at an index and collect stdout/stderr in a buffer that doubles: the same jq, linear IO.
// It fails loudly where the text it replaces is not there (a jq-wasm update): never a silent no-op.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

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
  // callMain puts argv on the wasm stack and never takes it back: the stack ran out after ~300 runs in one
  // instance (`chat --stream --json --jq` runs one a chunk: "memory access out of bounds"). Each run now
  // gives back what it took (stackAlloc of the difference: the stack grows down).
  // jq's output as it wrote it: trimmed, a string's own leading or trailing spaces went (`--jq` of each chunk
  // of a stream ran its words together). The caller ends it with a line end when it has none.
  ['return fromByteArray(stdoutBuffer.view()).trim();', 'return fromByteArray(stdoutBuffer.view());'],
  ['Module.callMain([...flags, query, "/dev/stdin"]);', 'const stackBefore = stackAlloc(0); try { Module.callMain([...flags, query, "/dev/stdin"]); } finally { stackAlloc(stackAlloc(0) - stackBefore); }'],
  // run(): jq over a stream of inputs (`--jq` of a stream's chunks, one run for all of them, not one each: jq's
  // start-up, its builtins compiled, was ~1.3 ms a run), with all it says: stdout, stderr and its exit status
  // (raw() drops stderr when there is stdout, so an error on a later input would go unseen).
  ['function rawImpl(jsonString, query, flags) {', `function runImpl(jsonString, query, flags) { stdinString = jsonString; stdinBuffer = toByteArray(stdinString); stdinAt = 0; stdoutBuffer = byteSink(); stderrBuffer = byteSink(); const stackBefore = stackAlloc(0); let status; try { status = Module.callMain([...(flags.includes("-M") ? [] : ["-M"]), ...flags, query, "/dev/stdin"]); } finally { stackAlloc(stackAlloc(0) - stackBefore); } return { out: fromByteArray(stdoutBuffer.view()), err: fromByteArray(stderrBuffer.view()), status }; }
        function rawImpl(jsonString, query, flags) {`],
  ['raw(jsonString, query, flags = []) { return runtimeInitPromise.then(() => rawImpl(jsonString, query, flags)); }', 'raw(jsonString, query, flags = []) { return runtimeInitPromise.then(() => rawImpl(jsonString, query, flags)); }, run(jsonString, query, flags = []) { return runtimeInitPromise.then(() => runImpl(jsonString, query, flags)); }'],
];

/**
 * jq-wasm's glue with linear IO; throws if any text it rewrites is missing or found twice. A rewrite
 * already made (by an earlier build, before a later one was added) is left as it is.
 */
export function linearJqGlue(source) {
  // The mark says how many of REPLACEMENTS were made: the first builds' mark, without a count, the first 7.
  const mark = /^\/\* router: linear jq IO(?: \((\d+) rewrites\))? \*\/\n/.exec(source);
  const done = mark ? Number(mark[1] ?? 7) : 0;
  let out = mark ? source.slice(mark[0].length) : source;
  for (const [from, to] of REPLACEMENTS.slice(done)) {
    const pattern = loose(from);
    const found = out.match(new RegExp(pattern.source, 'g'))?.length ?? 0;
    if (found !== 1) throw new Error(`jq-wasm's glue changed: expected once, found ${found} times: ${from.split('\n')[0]}`);
    out = out.replace(pattern, () => to);
  }
  if (/stdinBuffer\.slice\(|new Uint8Array\((stdout|stderr)Buffer\.length/.test(out)) throw new Error("jq-wasm's glue changed: a quadratic copy is left");
  return `/* router: linear jq IO (${REPLACEMENTS.length} rewrites) */\n${out}`;
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
