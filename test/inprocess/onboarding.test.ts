import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnvWithBatch, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;

beforeAll(async () => {
  ({ t } = await startCliEnvWithBatch());
});
afterAll(() => t.close());

const mgmt = () => ({ ROUTER_MANAGEMENT_KEY: t.managementKey });

describe('onboarding as written', () => {
  it('login checks the key first; config set refuses a key as an argument', async () => {
    const cfg = { ROUTER_CONFIG_DIR: join(t.dir, 'login-cfg'), ROUTER_API_KEY: '', ROUTER_API_ROOT: '' };
    const wrong = await t.run(['login', '--with-key', '--api-root', t.apiRoot], { input: 'sk-rt-v1-wrongwrongwrong', env: cfg });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(/refused the key \(401\): nothing saved/);
    const empty = await t.run(['login', '--with-key', '--api-root', t.apiRoot], { input: '', env: cfg });
    expect(empty.code).toBe(2);
    const ok = await t.run(['login', '--with-key', '--api-root', t.apiRoot], { input: t.apiKey, env: cfg });
    expect(ok.code).toBe(0);
    expect((await t.run(['chat', '--model', 'local/echo', 'saved'], { env: cfg })).stdout).toBe('saved\n');
    const arg = await t.run(['config', 'set', 'api_key', 'sk-rt-v1-onthecommandline'], { env: cfg });
    expect(arg.code).toBe(2);
    expect(arg.stderr).toMatch(/not taken as an argument/);
  });

  it('serve prints both keys with a line to paste; a 403 on speech says how to set the management key', async () => {
    const r = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts'], { env: { ROUTER_MANAGEMENT_KEY: '' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/ROUTER_MANAGEMENT_KEY/);
  });

  it('text that is not UTF-8 (binary, UTF-16) is refused, from stdin or a file; nothing is sent', async () => {
    const utf16 = Buffer.from('\ufeffhi there', 'utf16le');
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
    const binFile = join(t.dir, 'image.png');
    const utf16File = join(t.dir, 'notes16.txt');
    writeFileSync(binFile, binary);
    writeFileSync(utf16File, utf16);
    t.clearRequests();
    const piped: string[][] = [['chat', '--model', 'local/echo'], ['chat', '--model', 'local/echo', 'describe'], ['responses', '--model', 'local/echo'], ['embed', '--model', 'local/embed'], ['speak', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'x.mp3')]];
    for (const args of piped) {
      const r = await t.run(args, { input: binary, env: mgmt() });
      // A PNG piped to chat or responses is named, with the way to attach it (newcomer-sixth.test.ts).
      const attach = ['chat', 'responses'].includes(args[0]!) ? `; it is image/png: attach it with -a - (cat photo.png | router ${args[0]} -a - "what is this?")` : '';
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: stdin is not UTF-8 text (it holds a NUL byte at offset 9: binary data, not text)${attach}\n` });
    }
    // With or without a byte-order mark (iconv -t UTF-16LE writes none): its NUL bytes are valid UTF-8, but no text.
    for (const input of [utf16, Buffer.from('hello world', 'utf16le'), Buffer.from('hello world', 'utf16le').swap16()]) {
      const u = await t.run(['chat', '--model', 'local/echo'], { input });
      expect(u).toMatchObject({ code: 2, stderr: 'error: stdin is not UTF-8 text (it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8)\n' });
    }
    const nul = await t.run(['chat', '--model', 'local/echo', 'describe'], { input: Buffer.from('a\0b\n') });
    expect(nul).toMatchObject({ code: 2, stderr: 'error: stdin is not UTF-8 text (it holds a NUL byte at offset 1: binary data, not text)\n' });
    const files: [string[], string][] = [
      [['embed', '--model', 'local/embed', '--file', utf16File], `--file: ${utf16File}`],
      [['decide', '--model', 'local/judge', '--state', binFile, '--noul', 'spam', 'q'], `--state: ${binFile}`],
      [['responses', '--model', 'local/echo', '--input', binFile], `--input: ${binFile}`],
      [['api', 'POST', '/v1/chat/completions', '-F', `messages[][content]=@${binFile}`], `-F: ${binFile}`],
    ];
    for (const [args, what] of files) {
      const r = await t.run(args, { env: mgmt() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^error: ${what.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not UTF-8 text`));
    }
    expect(t.requests()).toHaveLength(0);
    // A UTF-8 byte-order mark is no reason to refuse, and is not sent.
    const bom = await t.run(['chat', '--model', 'local/echo'], { input: Buffer.from('\ufeffhello', 'utf8') });
    expect(bom).toMatchObject({ code: 0, stdout: 'hello\n' });
    // A raw body is bytes: `api --input -` sends them, and the service answers.
    const raw = await t.run(['api', 'POST', '/v1/chat/completions', '--input', '-'], { input: binary });
    expect(raw).toMatchObject({ code: 2, stderr: 'error: POST /api/v1/chat/completions: 400 Bad Request: request body is not valid JSON\n' });
  });

  it('piped stdin and a prompt go together: stdin first, then the prompt (chat, responses, decide)', async () => {
    const chat = await t.run(['chat', '--model', 'local/echo', 'summarize'], { input: 'the notes\n' });
    expect(chat.stdout).toBe('the notes\n\nsummarize\n');
    t.clearRequests();
    const resp = await t.run(['responses', '--model', 'local/echo', 'summarize'], { input: 'the notes' });
    expect(resp.code).toBe(0);
    expect(JSON.stringify(t.requests()[0]!.body.input)).toContain('the notes\\n\\nsummarize');
    t.clearRequests();
    const dec = await t.run(['decide', '--model', 'local/judge', '--noul', 'spam', 'Is this spam?'], { input: 'buy now', env: mgmt() });
    expect(dec.code).toBe(0);
    expect(t.requests()[0]!.body.state).toBe('buy now');
  });
});
