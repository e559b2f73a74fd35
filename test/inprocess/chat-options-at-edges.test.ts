/** Chat options at their edges: enormous schemas, odd attachments, --jq after an error, chat -i flags, two readers of stdin, a cut stream under --schema, escaped citations and image URLs. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
import { encodePng } from '../../src/emulator/models/png.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// Issue 33's features used the way a new user would, at their edges: sizes, odd files, combinations.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;

emulatorPerFile('router-rich-edges-', (f) => ({ emu, dir, env } = f), (folder) => ({ ROUTER_STATE_DIR: join(folder, 'rs'), XDG_STATE_HOME: join(folder, 'xdg') }));

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const lastBody = () => emu.requestLog[emu.requestLog.length - 1]!.body as Record<string, any>;

function toolsFile(name: string, tools: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(tools));
  return path;
}

describe('a schema whose smallest answer is enormous', () => {
  // Made whole, each of these held the emulator's only thread for minutes and gigabytes of memory.
  const huge = {
    items: { type: 'array', items: { type: 'integer' }, minItems: 100_000_000 },
    text: { type: 'object', properties: { s: { type: 'string', minLength: 100_000_000 } }, required: ['s'] },
    fanOut: {
      type: 'object',
      $defs: { n: { type: 'object', properties: Object.fromEntries('abcdefghij'.split('').map((k) => [k, { $ref: '#/$defs/n' }])), required: 'abcdefghij'.split('') } },
      properties: { root: { $ref: '#/$defs/n' } },
      required: ['root'],
    },
  };
  for (const [name, schema] of Object.entries(huge)) {
    it(`is a 400 naming the bound, and the emulator goes on answering (${name})`, async () => {
      const r = await run(['chat', '--model', 'local/lorem', '--schema', JSON.stringify(schema), 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^error: .*the JSON schema asks for an answer over 1,048,576 characters/);
      expect((await run(['chat', '--model', 'local/echo', 'still here'])).stdout).toBe('still here\n');
    });
  }

  it('tool parameters of that kind are a 400 for local/tools too', async () => {
    const tools = toolsFile('huge-tools.json', [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: huge.items }, required: ['a'] } } }]);
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/over 1,048,576 characters/);
  });

  it('a large answer within the bound is still made', async () => {
    const r = await run(['chat', '--model', 'local/lorem', '--schema', JSON.stringify({ type: 'array', items: { type: 'integer' }, minItems: 50_000 }), 'x']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(50_000);
  });
});

describe('attachments at their edges', () => {
  it('a device or pipe that never ends is read no further than the attachment limit, and named by it', async () => {
    const before = emu.requestLog.length;
    const r = await run(['chat', '--model', 'local/vision', '-a', '/dev/zero', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: --attach /dev/zero: larger than 20 MiB, the most one attachment may hold; nothing was sent\n');
    const piped = await run(['chat', '--model', 'local/vision', '-a', '-', 'x'], { input: Buffer.alloc(20 * 1024 * 1024 + 1) });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toBe('error: --attach -: larger than 20 MiB, the most one attachment may hold; nothing was sent\n');
    const empty = await run(['chat', '--model', 'local/vision', '-a', '-', 'x'], { input: '' });
    expect(empty).toMatchObject({ code: 2, stderr: 'error: --attach -: stdin was empty\n' });
    expect(emu.requestLog.length).toBe(before);
  });

  it('text piped to -a -, or in a file of a name no table knows, is a text/plain file part', async () => {
    const piped = await run(['chat', '--model', 'local/vision', '-a', '-', 'summarize'], { input: 'meeting notes: ship on Friday\n' });
    expect(piped.stderr).toBe('');
    expect(piped.code).toBe(0);
    expect(lastBody().messages.at(-1).content[1]).toEqual({ type: 'file', file: { filename: 'stdin', file_data: `data:text/plain;base64,${Buffer.from('meeting notes: ship on Friday\n').toString('base64')}` } });
    const makefile = join(dir, 'Makefile');
    writeFileSync(makefile, 'all:\n\techo "héllo"\n');
    const named = await run(['chat', '--model', 'local/vision', '-a', makefile, 'explain']);
    expect(named.code).toBe(0);
    expect(named.stdout).toMatch(/file "Makefile": text\/plain/);
  });

  it('bytes that are neither a known type nor text are still refused, nothing sent', async () => {
    const before = emu.requestLog.length;
    for (const bytes of [Buffer.from([0, 1, 2, 3]), Buffer.from([0xc3, 0x28, 0x41]), Buffer.from('\ufeffh\0i', 'utf16le')]) {
      const r = await run(['chat', '--model', 'local/vision', '-a', '-', 'x'], { input: bytes });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^error: --attach -: unknown type/);
    }
    expect(emu.requestLog.length).toBe(before);
    // A PNG is still sniffed from its bytes, whatever its name.
    const png = join(dir, 'picture.txt');
    writeFileSync(png, encodePng(3, 2, () => [0, 0, 0]));
    expect((await run(['chat', '--model', 'local/vision', '-a', png, 'x'])).stdout).toMatch(/3x2 pixels/);
  });
});

describe('--jq over an answer that ends the command with an error', () => {
  it('the answer printed before exit 11 (calls not run) or exit 10 (schema not followed) goes through the filter', async () => {
    const tools = toolsFile('no-command.json', [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }]);
    const calls = await run(['chat', '--model', 'local/tools', '--tools', tools, '--jq', '.choices[0].message.tool_calls[0].function.name', 'x']);
    expect(calls.code).toBe(11);
    expect(calls.stdout).toBe('lookup\n');
    const schema = JSON.stringify({ type: 'object', properties: { code: { type: 'string', pattern: '^[0-9]+$' } }, required: ['code'] });
    // --jq filters the answer (JSON that does not follow the schema); with --json, the completion.
    const mismatch = await run(['chat', '--model', 'local/echo', '--schema', schema, '--jq', 'keys[0]', 'x']);
    expect(mismatch.code).toBe(10);
    expect(mismatch.stdout).toBe('code\n');
    const completion = await run(['chat', '--model', 'local/echo', '--schema', schema, '--json', '--jq', '.choices[0].message.content | fromjson | keys[0]', 'x']);
    expect(completion).toMatchObject({ code: 10, stdout: 'code\n' });
  });
});

describe('chat -i and the flags of a one-shot chat', () => {
  const terminal = { tty: { stdin: true, stdout: true, stderr: true }, env: { NO_COLOR: '1' } };
  it('a flag the REPL would take and not honour is refused, nothing sent', async () => {
    const cases: [string[], string][] = [
      [['--schema', '{"type":"object"}'], '--schema'],
      [['--web'], '--web'],
      [['--save-images', dir], '--save-images'],
      [['--modalities', 'text,image'], '--modalities'],
      [['--jq', '.'], '--jq'],
    ];
    const before = emu.requestLog.length;
    for (const [flags, named] of cases) {
      const r = await run(['chat', '-i', '--model', 'local/echo', ...flags], terminal);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`error: ${named} applies to one call, not to chat -i\n`);
    }
    expect(emu.requestLog.length).toBe(before);
  });

  it('-a - with chat -i is refused (stdin is the terminal), not dropped without a word', async () => {
    const r = await run(['chat', '-i', '--model', 'local/vision', '-a', '-'], terminal);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: --attach -: stdin is the terminal chat -i reads; attach a file\n');
  });
});

describe('two flags that would both read stdin', () => {
  it('is one line naming them, before anything is read or sent', async () => {
    const png = encodePng(2, 2, () => [0, 0, 0]);
    const before = emu.requestLog.length;
    const cases: [string[], string][] = [
      [['chat', '--model', 'local/vision', '-a', '-', '--schema', '-', 'x'], '--attach -, --schema -'],
      [['chat', '--model', 'local/tools', '--tools', '-', '-a', '-', 'x'], '--attach -, --tools -'],
      [['responses', '--model', 'local/vision', '--tools', '-', '--schema', '-', 'x'], '--schema -, --tools -'],
    ];
    for (const [args, named] of cases) {
      const r = await run(args, { input: png });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`error: stdin can be read once: give a file to all but one of ${named}\n`);
    }
    expect(emu.requestLog.length).toBe(before);
  });
});

describe('a stream that breaks while an answer is held back for --schema', () => {
  // Responses sends four events before its first text delta.
  const cutNext = async (after: number) => {
    const res = await fetch(`${emu.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${env.ROUTER_MANAGEMENT_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: [`cut,after=${after},times=1`] }) });
    expect(res.status).toBe(200);
  };
  const schema = JSON.stringify({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } }, required: ['a', 'b', 'c'] });
  for (const command of ['chat', 'responses']) {
    it(`ends with the text that came, then the error line (${command})`, async () => {
      await cutNext(command === 'chat' ? 4 : 8);
      const r = await run([command, '--stream', '--max-retries', '0', '--model', 'local/lorem', '--schema', schema, 'x']);
      expect(r.code).toBe(8);
      expect(r.stdout).toMatch(/^\{"a".*\n$/);
      expect(r.stderr).toMatch(/^error: the stream was cut/);
    });
  }
});

describe('citations listed on a terminal', () => {
  it('a title from a web page holding an escape sequence is shown escaped', async () => {
    const { startFixtureServer } = await import('../support/fixture-server.js');
    const annotation = { type: 'url_citation', url_citation: { url: 'https://example.org/a', title: '\x1b]0;owned\x07Rivers\x1b[2J', start_index: 0, end_index: 6 } };
    const completion = { id: 'gen-1', object: 'chat.completion', created: 1, model: 'local/echo', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'rivers', annotations: [annotation] } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
    const server = await startFixtureServer({ 'POST /api/v1/chat/completions': { body: completion } });
    try {
      const r = await run(['chat', '--no-stream', '--model', 'local/echo', '--web', 'rivers'], { tty: { stdin: false, stdout: false, stderr: true }, env: { NO_COLOR: '1', ROUTER_API_ROOT: server.apiRoot } });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('[1] \\u001b]0;owned\\u0007Rivers\\u001b[2J <https://example.org/a>\n');
    } finally {
      await server.close();
    }
  });
});

describe('an image that came back as a URL', () => {
  it('is listed (not fetched) with its control characters escaped', async () => {
    const { startFixtureServer } = await import('../support/fixture-server.js');
    const images = [{ type: 'image_url', image_url: { url: 'https://example.org/cat.png\x1b[2J' } }];
    const completion = { id: 'gen-1', object: 'chat.completion', created: 1, model: 'local/painter', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'a cat', images } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
    const server = await startFixtureServer({ 'POST /api/v1/chat/completions': { body: completion } });
    try {
      const r = await run(['chat', '--no-stream', '--model', 'local/painter', '--save-images', dir, 'a cat'], { env: { ROUTER_API_ROOT: server.apiRoot } });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('image: https://example.org/cat.png\\u001b[2J\n');
    } finally {
      await server.close();
    }
  });
});
