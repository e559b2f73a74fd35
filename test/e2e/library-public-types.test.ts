import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { installedPackage } from '../support/installed-package.js';
import { diagnosticLines } from '../support/ts-diagnostics.js';
// @ts-expect-error: a build script, plain JavaScript
import { publicTypeGaps, STRICTEST } from '../../scripts/public-types.mjs';

// The package's types as a program checked strictly reads them, from the packed tarball's declarations (what
// package.json's "exports" hands out). Before: 435 optional properties of the types its entry points export refused
// `undefined` under `exactOptionalPropertyTypes` (a program passing on its own optional setting, `{ timeoutMs:
// settings.timeout }`, did not compile, though the package reads undefined as not given; n12 had mended the client's
// options only), and the streams', pages' and lists' iterators ended with `any` (TypeScript 5.6's lib: the
// `value` of a done step, `next()`'s argument). Found by walking every exported type, not by a list.
const ROOT = resolve(import.meta.dirname, '..', '..');
const gaps = publicTypeGaps as (program: ts.Program, entries: string[], own: (file: string) => boolean) => {
  optional: { file: string; line: number; name: string; path: string }[];
  anyIterators: { path: string; type: string }[];
};

describe("the packed package's public types under exactOptionalPropertyTypes", () => {
  let pkg: string;
  beforeAll(async () => {
    pkg = join((await installedPackage(ROOT)).prefix, 'node_modules', 'router-cli');
  }, 240_000);

  const entries = () => ['client', 'kit', 'batch'].map((e) => join(pkg, 'dist', e, 'index.d.ts'));
  const own = (file: string) => file.startsWith(join(pkg, 'dist'));
  // Node's types as the checkout has them (the package's own install holds none): an unresolved NodeJS.ProcessEnv would read as any.
  const options = () => ({ ...(STRICTEST as ts.CompilerOptions), typeRoots: [join(ROOT, 'node_modules', '@types')] });

  it('every optional property of every exported type takes undefined, and no iterator ends with any', () => {
    const program = ts.createProgram(entries(), options());
    const { optional, anyIterators } = gaps(program, entries(), own);
    // The walk reaches the package's types (it is no walk of nothing): ClientOptions' apiRoot is among them.
    expect(program.getSourceFiles().filter((f) => own(f.fileName)).length).toBeGreaterThan(50);
    expect(optional.map((o) => `${o.file.slice(pkg.length + 1)}:${o.line} ${o.path}`)).toEqual([]);
    expect(anyIterators).toEqual([]);
  }, 120_000);

  it('a program written against the tarball passes undefined for optional members and reads iterators without any', () => {
    // A program of its own beside the installed package's node_modules (the install is kept read only).
    const dir = mkdtempSync(join(tmpdir(), 'router-public-types-'));
    symlinkSync(join(pkg, '..'), join(dir, 'node_modules'));
    const file = join(dir, 'main.mts');
    writeFileSync(file, `
import { RouterClient, type CallOptions, type ChatCompletionRequest, type EventStream, type ChatChunk } from 'router-cli';
import { chatModel, ConversationStore, type ToolResult } from 'router-cli/kit';
import { runJob, type WatchOptions } from 'router-cli/batch';
type IsAny<T> = 0 extends 1 & T ? true : false;
export async function main(s: { timeout?: number; temperature?: number; user?: string; interval?: number; code?: number }, stream: EventStream<ChatChunk>) {
  const client = new RouterClient({ apiKey: process.env.ROUTER_API_KEY });
  const call: CallOptions = { timeoutMs: s.timeout, sessionId: s.user };
  const request: ChatCompletionRequest = { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }], temperature: s.temperature, user: s.user };
  await client.chat.create(request, call);
  const watch: WatchOptions = { interval: s.interval, offlineTimeout: undefined };
  const result: ToolResult = { ok: true, text: '', code: s.code };
  await runJob(client, { input: 'requests.jsonl', watch: undefined, maxRequests: undefined });
  await chatModel(client, 'local/echo').conversation({ store: new ConversationStore({ dir: undefined }) }).prompt('hi', { system: undefined });
  const step = await stream[Symbol.asyncIterator]().next();
  const ended: IsAny<typeof step.value> = false;
  const pages = client.batches.listAll();
  const last = await pages.next();
  const endOfPages: IsAny<typeof last.value> = false;
  const sse = await (await client.responses.stream({ model: 'm', input: 'hi' })).batches().next();
  const events: IsAny<typeof sse.value> = false;
  return [watch, result, ended, endOfPages, events];
}
`);
    try {
      expect(diagnosticLines(ts.createProgram([file], options()), file)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
