import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// A file that is no UTF-8 text (UTF-16 as PowerShell's `>` and Notepad's "Unicode" write it, an image, a
// binary) is said in one line by every reader of a file or stdin, as chat's stdin and -f say it: not as a
// page of per-line JSON errors (batch), nor embedded as garbage (embed-multi --files), nor as a YAML riddle (serve).
const lines = [1, 2, 3].map((i) => JSON.stringify({ custom_id: `q${i}`, body: { messages: [{ role: 'user', content: `river ${i}` }] } })).join('\n') + '\n';
const utf16le = (s: string) => Buffer.from(s, 'utf16le');
const binary = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 37 + 11) % 256));
const NUL = binary.indexOf(0);
const UTF16 = 'is not UTF-8 text (it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8)';
const t = startedForAll(() => startCliEnv());

const file = (name: string, bytes: Buffer | string) => {
  const path = join(t.dir, name);
  writeFileSync(path, bytes);
  return path;
};
const batchPosts = () => t.requests().filter((r) => r.method === 'POST' && r.path.includes('batches')).length;

describe('batch create and batch run of a file that is not text', () => {
  it('say UTF-16, with or without its byte-order mark, in one line, and send nothing', async () => {
    const before = batchPosts();
    for (const [name, bytes] of [['bom16.jsonl', Buffer.concat([Buffer.from([0xff, 0xfe]), utf16le(lines)])], ['le16.jsonl', utf16le(lines)]] as const) {
      const path = file(name, bytes);
      for (const command of ['create', 'run']) {
        const r = await t.run(['batch', command, path, '--model', 'local/echo']);
        expect(r.code, `${command} ${name}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toBe(`error: ${path} ${UTF16}\n`);
      }
    }
    expect(batchPosts()).toBe(before);
  });

  it('say binary data in one line, naming the offset in the file, from a file and from stdin', async () => {
    const path = file('photo.jsonl', binary);
    const r = await t.run(['batch', 'create', path, '--model', 'local/echo']);
    expect(r).toMatchObject({ code: 2, stderr: `error: ${path} is not UTF-8 text (it holds a NUL byte at offset ${NUL}: binary data, not text)\n` });
    const piped = await t.run(['batch', 'create', '-', '--model', 'local/echo'], { input: binary });
    expect(piped).toMatchObject({ code: 2, stderr: `error: stdin is not UTF-8 text (it holds a NUL byte at offset ${NUL}: binary data, not text)\n` });
    // Good lines first: the offset is the file's, not the line's.
    const mixed = file('mixed.jsonl', Buffer.concat([Buffer.from(lines), binary]));
    expect((await t.run(['batch', 'run', mixed, '--model', 'local/echo'])).stderr).toBe(`error: ${mixed} is not UTF-8 text (it holds a NUL byte at offset ${Buffer.byteLength(lines) + NUL}: binary data, not text)\n`);
  });

  it('still lists each line of text in another encoding (Latin-1), by its number', async () => {
    const path = file('latin1.jsonl', Buffer.from(lines.replace('river 2', 'rivière 2'), 'latin1'));
    const r = await t.run(['batch', 'create', path, '--model', 'local/echo']);
    expect(r).toMatchObject({ code: 2, stderr: `error: ${path}:2: not valid UTF-8\n` });
  });
});

describe('embed-multi --files', () => {
  it('skips a binary or UTF-16 file with a note, embedding the text files only', async () => {
    const dir = join(t.dir, 'notes');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.md'), 'hello notes\n');
    writeFileSync(join(dir, 'b.md'), binary);
    writeFileSync(join(dir, 'c.md'), Buffer.concat([Buffer.from([0xff, 0xfe]), utf16le('hello in UTF-16\n')]));
    const before = t.requests().length;
    const r = await t.run(['embed-multi', 'notes', '--files', dir, '*.md', '--model', 'local/embed', '--store']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`note: ${join(dir, 'b.md')} skipped: not UTF-8 text (it holds a NUL byte at offset ${NUL}: binary data, not text)`);
    expect(r.stderr).toContain(`note: ${join(dir, 'c.md')} skipped: not UTF-8 text (it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8)`);
    const sent = t.requests().slice(before).filter((q) => q.path.endsWith('/embeddings')).flatMap((q) => [q.body.input].flat());
    expect(sent).toEqual(['hello notes\n']);
    expect((await t.run(['collections', 'list', '--json'])).stdout).toContain('"name":"notes"');
  });
});

describe('serve --providers', () => {
  it('says a UTF-16 providers file is UTF-16', async () => {
    const path = file('gateway16.yaml', Buffer.concat([Buffer.from([0xff, 0xfe]), utf16le('providers:\n  - name: up\n    base_url: http://127.0.0.1:9/v1\n    models: { meta/x: x }\n')]));
    const r = await t.run(['serve', '--port', '0', '--providers', path]);
    expect(r).toMatchObject({ code: 2, stderr: `error: --providers ${path} ${UTF16}\n` });
  });
});
