import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCliInProcess } from '../support/cli-env.js';
import { localService, type LocalUpstream } from '../support/upstreams.js';
import { until } from '../support/until.js';

// `router api` hid an echoed key in a 2xx body only as plain bytes: coded (gzip, br, deflate) it went to
// stdout as it came, the key inside. Now the body is decoded, then the key hidden, piece by piece as it comes.
const KEY = 'sk-or-v1-coded-0123456789abcdef0123456789';
const CODERS: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, br: brotliCompressSync, deflate: deflateSync, 'raw-deflate': deflateRawSync };
let service: LocalUpstream;
let dir: string;
/** Set by the streaming test: stdout has its first byte. */
let printedYet = () => false;
let endedAfterPrint: boolean | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-api-coded-'));
  service = await localService((req, res) => {
    const key = String(req.headers.authorization).slice('Bearer '.length);
    const text = Buffer.from(`{"label":"made with ${key}","n":1}\n`);
    const coding = new URL(req.url!, 'http://x').searchParams.get('coding') ?? 'gzip';
    if (req.url?.includes('/v1/split')) {
      // Chunked, the key cut across writes (and so across reads): each piece flushed on its own.
      res.writeHead(200, { 'content-type': 'application/json' });
      const at = text.indexOf(key) + 7;
      res.write(text.subarray(0, at));
      setImmediate(() => res.end(text.subarray(at)));
      return;
    }
    if (req.url?.includes('/v1/unknown')) return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'compress' }).end(text);
    if (req.url?.includes('/v1/big')) {
      // More than router holds before printing, then the rest only once stdout shows something (or after a bound).
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(3 * 1024 * 1024, 0x61));
      res.write(text);
      void until(() => printedYet(), 20_000).then((printed) => {
        endedAfterPrint = printed;
        res.end('end\n');
      });
      return;
    }
    if (coding === 'gzip, br') return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(brotliCompressSync(gzipSync(text)));
    const header = coding === 'raw-deflate' ? 'deflate' : coding;
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': header });
    // In pieces a byte or two long: the key is cut across reads of the coded bytes.
    const coded = CODERS[coding]!(text);
    const half = coded.length >> 1;
    res.write(coded.subarray(0, half));
    setImmediate(() => res.end(coded.subarray(half)));
  });
});
afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

const envOf = () => ({ ROUTER_API_ROOT: service.baseUrl.replace(/\/v1$/, '/api'), ROUTER_API_KEY: KEY, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'state') });

it.each(['gzip', 'br', 'deflate', 'raw-deflate', 'gzip, br'])('router api: a 2xx body coded %s that echoes the key is printed decoded, the key hidden', async (coding) => {
  // runCliInProcess itself fails a run whose output holds the key as plain bytes; before, stdout held the coded bytes.
  const r = await runCliInProcess(['api', `/v1/coded?coding=${encodeURIComponent(coding)}`], { env: envOf() });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe('{"label":"made with ****","n":1}\n');
});

it.each([[[]], [['--jq', '.label']]])('router api %j: a key cut across two reads of a chunked body is hidden', async (flags) => {
  const r = await runCliInProcess(['api', ...flags, '/v1/split'], { env: envOf() });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('made with ****');
});

it('router api: a body coded in a way router cannot undo is not printed at all, and said', async () => {
  const r = await runCliInProcess(['api', '/v1/unknown'], { env: envOf() });
  expect(r.code).toBe(7);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^error: the answer is coded "compress", which cannot be decoded here: nothing of it was printed/);
});

it('router api: a large answer is printed as it comes, not held whole first', async () => {
  // Before, the whole body was read before a byte was printed: the server below ends only after stdout has
  // something, so the old code printed only after the server's bound ran out (the 64 MiB answer took 397 MB).
  const out: Buffer[] = [];
  const stdout = Object.assign(new PassThrough(), { columns: 80 });
  stdout.on('data', (c: Buffer) => out.push(c));
  printedYet = () => out.length > 0;
  const stderr = new PassThrough();
  const { main } = await import('../../src/cli/main.js');
  const code = await main(['node', 'router', 'api', '/v1/big'], { stdin: Readable.from([]), stdout, stderr, env: { ...process.env, ...envOf() }, tty: { stdin: false, stdout: false, stderr: false } });
  expect(code).toBe(0);
  expect(endedAfterPrint).toBe(true);
  const all = Buffer.concat(out);
  expect(all.length).toBe(3 * 1024 * 1024 + `{"label":"made with ****","n":1}\n`.length + 4);
  expect(all.includes(KEY)).toBe(false);
  expect(all.subarray(-4).toString()).toBe('end\n');
});
