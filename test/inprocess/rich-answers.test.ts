import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { encodePng } from '../../src/emulator/models/png.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';

// chat and responses beyond text (issue 33), over real HTTP against the emulator in this process.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let png: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-rich-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const { apiKey, managementKey } = emu.store.firstKeys();
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'rs'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_VOICE: '', ROUTER_SPEECH_MODEL: '', ROUTER_EMBED_MODEL: '' };
  png = join(dir, 'photo.png');
  writeFileSync(png, encodePng(40, 30, () => [200, 10, 10]));
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const lastBody = () => emu.requestLog[emu.requestLog.length - 1]!.body as Record<string, any>;

describe('attachments', () => {
  for (const stream of ['--stream', '--no-stream']) {
    it(`an image goes as an image_url data URL part after the text; local/vision reads its size (${stream})`, async () => {
      const r = await run(['chat', stream, '--model', 'local/vision', '-a', png, 'what is this?']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/1\. image: image\/png, \d+ bytes, 40x30 pixels/);
      const content = lastBody().messages.at(-1).content;
      expect(content[0]).toEqual({ type: 'text', text: 'what is this?' });
      expect(content[1].type).toBe('image_url');
      expect(content[1].image_url.url).toMatch(/^data:image\/png;base64,iVBOR/);
    });
  }
});

describe('attachments, more kinds and refusals', () => {
  it('a PDF is a file part, a WAV an input_audio part, a URL goes as it is (not fetched)', async () => {
    const pdf = join(dir, 'report.pdf');
    writeFileSync(pdf, '%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n');
    const wav = join(dir, 'clip.bin');
    writeFileSync(wav, Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(32)]));
    const r = await run(['chat', '--model', 'local/vision', '-a', pdf, '-a', wav, '-a', 'https://example.org/cat.jpg', 'look']);
    expect(r.code).toBe(0);
    const content = lastBody().messages.at(-1).content;
    expect(content[1]).toEqual({ type: 'file', file: { filename: 'report.pdf', file_data: expect.stringMatching(/^data:application\/pdf;base64,JVBERi/) } });
    expect(content[2]).toEqual({ type: 'input_audio', input_audio: { data: expect.any(String), format: 'wav' } });
    expect(content[3]).toEqual({ type: 'image_url', image_url: { url: 'https://example.org/cat.jpg' } });
    expect(r.stdout).toMatch(/file "report.pdf": application\/pdf/);
    expect(r.stdout).toMatch(/audio: audio\/wav/);
    expect(r.stdout).toMatch(/image: a URL, https:\/\/example.org\/cat.jpg/);
  });

  it('-a - reads the attachment from stdin; the prompt comes from the arguments', async () => {
    const r = await run(['chat', '--model', 'local/vision', '-a', '-', 'and this?'], { input: readFileSync(png) });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/40x30 pixels/);
    expect(lastBody().messages.at(-1).content[0]).toEqual({ type: 'text', text: 'and this?' });
  });

  it('a missing file, an unknown type: one line, exit 2, nothing sent', async () => {
    const junk = join(dir, 'junk.xyz');
    writeFileSync(junk, Buffer.from([0, 1, 2, 3, 4]));
    for (const path of [join(dir, 'nope.png'), junk]) {
      const before = emu.requestLog.length;
      const r = await run(['chat', '--model', 'local/vision', '-a', path, 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^error: --attach:? .*(cannot read|unknown type)/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(emu.requestLog.length).toBe(before);
    }
  });

  it('a URL that does not parse (no host, a space): one line, exit 2, nothing sent (not an internal error)', async () => {
    for (const url of ['https://', 'https://exa mple.com/a.png']) {
      const before = emu.requestLog.length;
      for (const command of ['chat', 'responses']) {
        const r = await run([command, '--model', 'local/vision', '-a', url, 'x']);
        expect(r, `${command} ${url}`).toMatchObject({ code: 2, stderr: `error: --attach ${url}: not a valid URL\n` });
      }
      expect(emu.requestLog.length).toBe(before);
    }
  });

  it('an attachment over 20 MiB, or stdin attached twice: one line, exit 2, nothing sent', async () => {
    const big = join(dir, 'big.png');
    writeFileSync(big, Buffer.concat([readFileSync(png), Buffer.alloc(20 * 1024 * 1024)]));
    const before = emu.requestLog.length;
    const r = await run(['chat', '--model', 'local/vision', '-a', big, 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --attach .*big\.png: larger than 20 MiB, the most one attachment may hold; nothing was sent\n$/);
    expect((await run(['chat', '--model', 'local/vision', '-a', '-', '-a', '-', 'x'])).stderr).toBe('error: --attach -: stdin can be attached once\n');
    expect(emu.requestLog.length).toBe(before);
    rmSync(big);
  });

  it('a model that does not take images: refused before sending, naming the modality, exit 2', async () => {
    const r = await run(['chat', '--model', 'local/echo', '-a', png, 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/local\/echo takes text input, not image; models that do: router models --input-modality image; nothing was sent/);
  });

  it('the conversation keeps the attachment by reference (name and hash), not its bytes nor its folder', async () => {
    const r = await run(['chat', '--model', 'local/vision', '--conversation', 'pics', '-a', png, 'see']);
    expect(r.code).toBe(0);
    const shown = await run(['conversations', 'show', 'pics', '--json']);
    expect(shown.stdout).toMatch(/\[attachment: photo\.png \(image\/png, \d+ bytes, sha256:[0-9a-f]{64}\)\]/);
    expect(shown.stdout).not.toMatch(/base64/);
    // Taken up, the turn goes with its reference: the file's name, never the folder it was in.
    expect((await run(['chat', '--model', 'local/vision', '--conversation', 'pics', 'and now?'])).code).toBe(0);
    expect(lastBody().messages[0].content).toMatch(/^see\n\[attachment: photo\.png \(image\/png, \d+ bytes, sha256:[0-9a-f]{64}\)\]$/);
    expect(JSON.stringify(lastBody())).not.toContain(dir);
  });

  it('responses -a sends input_image parts', async () => {
    const r = await run(['responses', '--model', 'local/vision', '-a', png, 'describe']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/40x30 pixels/);
    const input = lastBody().input;
    expect(input[0].content[0]).toEqual({ type: 'input_text', text: 'describe' });
    expect(input[0].content[1]).toMatchObject({ type: 'input_image', image_url: expect.stringMatching(/^data:image\/png;base64,/) });
  });
});

const SCHEMA = JSON.stringify({ type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 1 } }, required: ['city', 'population'], additionalProperties: false });

// spec: chat.response-format
describe('--schema', () => {
  for (const stream of ['--stream', '--no-stream']) {
    it(`chat: a strict json_schema format is sent; the valid answer is printed as one line of JSON (${stream})`, async () => {
      const r = await run(['chat', stream, '--model', 'local/lorem', '--schema', SCHEMA, 'a city']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n')).toHaveLength(2);
      const value = JSON.parse(r.stdout);
      expect(Object.keys(value).sort()).toEqual(['city', 'population']);
      expect(lastBody().response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema: JSON.parse(SCHEMA), strict: true } });
    });
  }

  it('responses: sent as text.format, read from a file', async () => {
    const file = join(dir, 'schema.json');
    writeFileSync(file, SCHEMA);
    const r = await run(['responses', '--model', 'local/echo', '--schema', file, 'a city']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ city: expect.any(String) });
    expect(lastBody().text.format).toMatchObject({ type: 'json_schema', name: 'answer', strict: true });
  });

  it('an answer that does not follow it: printed as received, one error line naming the mismatch, exit 10', async () => {
    // The emulator fills strings with words: a pattern of digits is not met.
    const schema = JSON.stringify({ type: 'object', properties: { code: { type: 'string', pattern: '^[0-9]+$' } }, required: ['code'] });
    const r = await run(['chat', '--model', 'local/echo', '--schema', schema, 'x']);
    expect(r.code).toBe(10);
    expect(JSON.parse(r.stdout)).toHaveProperty('code');
    expect(r.stderr).toMatch(/^error: the answer does not follow --schema: \/code must match pattern/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a schema that is not JSON or not a schema: exit 2, nothing sent; batch create does not take it', async () => {
    for (const bad of ['{"type":', '{"type":"nonsense"}']) {
      const before = emu.requestLog.length;
      const r = await run(['chat', '--model', 'local/echo', '--schema', bad, 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^error: --schema/);
      expect(emu.requestLog.length).toBe(before);
    }
    expect((await run(['chat', '--schema', SCHEMA, '--response-format', 'json_object', 'x'])).stderr).toBe('error: give one of --schema and --response-format\n');
    expect((await run(['responses', '--schema', SCHEMA, '--text-format', 'text', 'x'])).stderr).toBe('error: give one of --schema and --text-format\n');
    for (const command of ['create', 'run']) {
      const r = await run(['batch', command, 'x.jsonl', '--schema', SCHEMA]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^error: --schema is not taken by batches: .*"response_format"/);
    }
  });
});

describe('a json_object format', () => {
  it('is answered with a JSON object by every chat model, as a real model answers it (chat and responses, streamed or not)', async () => {
    for (const args of [
      ['chat', '--model', 'local/echo', '--response-format', 'json_object', 'hi'],
      ['chat', '--model', 'local/lorem', '--no-stream', '--response-format', 'json_object', 'hi'],
      ['responses', '--model', 'local/echo', '--text-format', 'json_object', 'hi'],
      ['responses', '--model', 'local/lorem', '--no-stream', '--text-format', 'json_object', 'hi'],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(0);
      const value = JSON.parse(r.stdout) as unknown;
      expect(value && typeof value === 'object' && !Array.isArray(value), r.stdout).toBe(true);
    }
  });
});

describe('batches of such bodies', () => {
  // Batches are text only (the real service refuses image, audio and file parts in them: shared/reference notes).
  it('a json_schema format and the web plugin run in a batch as in a single request', async () => {
    const file = join(dir, 'rich.jsonl');
    const lines = [
      { custom_id: 'json', body: { messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: JSON.parse(SCHEMA) } } } },
      { custom_id: 'web', body: { messages: [{ role: 'user', content: 'rivers' }], plugins: [{ id: 'web' }] } },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    const out = join(dir, 'rich-results.jsonl');
    const r = await run(['batch', 'create', file, '--model', 'local/echo', '--watch', '--results', out]);
    expect(r.code).toBe(0);
    const results = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const message = (id: string) => results.find((x) => x.custom_id === id).response.body.choices[0].message;
    expect(Object.keys(JSON.parse(message('json').content)).sort()).toEqual(['city', 'population']);
    expect(message('web').annotations[0].type).toBe('url_citation');
  });
});
