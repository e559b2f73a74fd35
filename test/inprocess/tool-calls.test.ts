import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';
import { RouterClient } from '../../src/client/index.js';
import { MessageAssembler } from '../../src/client/message-assembler.js';

// Tools run locally, reasoning, generated images and citations (issue 33), over real HTTP.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;

emulatorPerFile('router-tools-', (f) => ({ emu, dir, env } = f), (folder) => ({ XDG_STATE_HOME: join(folder, 'xdg') }));

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const chatBodies = () => emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).map((e) => e.body as Record<string, any>);

const weather = (command?: unknown) => ({
  type: 'function',
  function: { name: 'get_weather', description: 'the weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  ...(command === undefined ? {} : { command }),
});

function toolsFile(name: string, tools: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(tools));
  return path;
}

// spec: chat.function-tools, chat.message-tool-calls
describe('--tools', () => {
  for (const stream of ['--stream', '--no-stream']) {
    it(`runs the called tool's command (arguments on stdin), sends the result, prints the final text (${stream})`, async () => {
      const file = toolsFile('run.json', [weather(`cat > ${join(dir, 'args.json')}; echo 18C and sunny`)]);
      const before = chatBodies().length;
      const r = await run(['chat', stream, '--model', 'local/tools', '--tools', file, 'weather in Paris']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('From the tool results: get_weather answered: 18C and sunny\n');
      expect(JSON.parse(readFileSync(join(dir, 'args.json'), 'utf8'))).toEqual({ city: 'weather in Paris' });
      const bodies = chatBodies().slice(before);
      expect(bodies).toHaveLength(2);
      // The command is router's own: never sent.
      for (const b of bodies) expect(JSON.stringify(b.tools)).not.toMatch(/command/);
      const [assistant, tool] = bodies[1]!.messages.slice(-2);
      expect(assistant).toMatchObject({ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"weather in Paris"}' } }] });
      expect(tool).toEqual({ role: 'tool', tool_call_id: assistant.tool_calls[0].id, content: '18C and sunny\n' });
    });
  }

  it('an argv command; a failing one sends its exit code and stderr back and the loop goes on; --verbose traces each call', async () => {
    const file = toolsFile('fail.json', [weather(['sh', '-c', 'echo no network >&2; exit 3'])]);
    const r = await run(['--verbose', 'chat', '--model', 'local/tools', '--tools', file, 'weather']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/get_weather answered: the command exited with code 3; stderr:\s+no network/);
    expect(r.stderr).toMatch(/tool get_weather \{"city":"weather"\} -> exit 3/);
  });

  it("what a command that succeeded logs on stderr is shown where its call is (--verbose piped), never sent to the model", async () => {
    const file = toolsFile('logs.json', [weather(['sh', '-c', 'echo looking up the city >&2; echo 18C'])]);
    for (const verbose of [true, false]) {
      const before = chatBodies().length;
      const r = await run([...(verbose ? ['--verbose'] : []), 'chat', '--model', 'local/tools', '--tools', file, 'weather']);
      expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: get_weather answered: 18C\n' });
      expect(r.stderr).toBe(verbose ? 'tool get_weather {"city":"weather"} -> exit 0\n  result: 18C\\n\n  stderr: looking up the city\\n\n' : '');
      const tool = chatBodies().slice(before)[1]!.messages.at(-1);
      expect(tool).toMatchObject({ role: 'tool', content: '18C\n' });
    }
  });

  it('a tool without a command: the calls are printed as JSON lines and the exit code is 11', async () => {
    const file = toolsFile('bare.json', [weather()]);
    const r = await run(['chat', '--model', 'local/tools', '--tools', file, 'weather in Oslo']);
    expect(r.code).toBe(11);
    expect(JSON.parse(r.stdout)).toEqual({ id: expect.stringMatching(/^call_/), name: 'get_weather', arguments: { city: 'weather in Oslo' } });
    expect(r.stderr).toMatch(/^error: the model asked for a tool call that were not run \(get_weather has no "command" in --tools\)\n$|^error: the model asked for a tool call/);
    const json = await run(['chat', '--json', '--model', 'local/tools', '--tools', file, 'weather']);
    expect(json.code).toBe(11);
    expect(JSON.parse(json.stdout).choices[0].message.tool_calls[0].function.name).toBe('get_weather');
  });

  it('several calls in one answer are assembled by index and each is run', async () => {
    const time = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string', enum: ['UTC', 'CET'] } }, required: ['zone'] } }, command: 'echo noon' };
    const file = toolsFile('two.json', [weather('echo rain'), time]);
    const r = await run(['chat', '--model', 'local/tools', '--tools', file, 'get_weather and get_time please']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('From the tool results: get_weather answered: rain; get_time answered: noon\n');
  });

  it('--approve off a terminal, or with --schema: refused before sending', async () => {
    const file = toolsFile('approve.json', [weather('echo x')]);
    const before = emu.requestLog.length;
    const r = await run(['chat', '--model', 'local/tools', '--tools', file, '--approve', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --approve asks on a terminal/);
    expect((await run(['chat', '--model', 'local/tools', '--tools', file, '--schema', '{"type": "object"}', 'x'])).stderr).toBe('error: give one of --schema and --tools\n');
    expect(emu.requestLog.length).toBe(before);
  });

  it('bad tools files: one line, exit 2, nothing sent', async () => {
    for (const tools of [[{ type: 'function' }], [weather(42)], {}]) {
      const before = emu.requestLog.length;
      const r = await run(['chat', '--model', 'local/tools', '--tools', toolsFile('bad.json', tools as unknown[]), 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^error: --tools/);
      expect(emu.requestLog.length).toBe(before);
    }
  });

  it('a tools file that holds one tool, a JSON schema or a file of MCP servers says what it holds and where it goes, nothing sent', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const servers = { mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] } } };
    const cases: [unknown, string][] = [
      [weather('echo sunny'), 'it holds one tool, not an array of them: put it in [ ]'],
      [{ type: 'function', name: 'utc_now', command: 'date -u' }, 'it holds one tool, not an array of them: put it in [ ]'],
      [schema, 'it holds a JSON schema, not tools: --schema FILE asks for an answer that follows it; a tool\'s schema goes in its "parameters"'],
      [servers, `it is a file of MCP servers ("mcpServers"): give each server as --mcp COMMAND or --mcp URL, as --mcp 'npx -y @modelcontextprotocol/server-filesystem .'`],
    ];
    for (const [value, why] of cases) {
      const path = join(dir, 'not-tools.json');
      writeFileSync(path, JSON.stringify(value));
      const before = emu.requestLog.length;
      for (const given of [path, `@${path}`]) {
        const r = await run(['chat', '--model', 'local/tools', '--tools', given, 'x']);
        expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: --tools must hold a JSON array of at least one tool: ${why}\n` });
      }
      expect(emu.requestLog.length).toBe(before);
    }
  });

  it('parameters that are not a JSON schema object (a typo in a type, an array): one line naming the tool, exit 2, nothing sent', async () => {
    const typo = { ...weather('cat'), function: { name: 'get_weather', parameters: { type: 'objekt' } } };
    const list = { ...weather('cat'), function: { name: 'get_weather', parameters: [] } };
    for (const [tool, message] of [
      [typo, /^error: --tools: the parameters of get_weather are not a valid JSON schema \(.*type must be one of "array", /],
      [list, /^error: --tools: the parameters of get_weather must be a JSON schema object\n$/],
    ] as const) {
      const before = emu.requestLog.length;
      const r = await run(['chat', '--model', 'local/tools', '--tools', toolsFile('bad-params.json', [tool]), 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(emu.requestLog.length).toBe(before);
    }
    const before = emu.requestLog.length;
    const responses = await run(['responses', '--model', 'local/tools', '--tools', toolsFile('bad-params.json', [{ type: 'function', name: 'get_weather', parameters: { type: 'objekt' } }]), 'x']);
    expect(responses).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --tools: the parameters of get_weather are not a valid JSON schema/) });
    expect(emu.requestLog.length).toBe(before);
  });
});

// spec: chat.message-reasoning, chat.message-images, chat.message-annotations
describe('reasoning, images, citations', () => {
  for (const stream of ['--stream', '--no-stream']) {
    it(`--show-reasoning puts the reasoning on stderr, never on stdout (${stream})`, async () => {
      const shown = await run(['chat', stream, '--model', 'local/thinker', '--show-reasoning', 'why is the sky blue?']);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toBe('Having thought it over: why is the sky blue?\n');
      expect(shown.stderr).toBe('The question is about "why is the sky blue?". I list what I know, weigh it, and answer briefly.\n');
      const hidden = await run(['chat', stream, '--model', 'local/thinker', 'why?']);
      expect(hidden).toMatchObject({ code: 0, stderr: '' });
    });

    it(`responses --show-reasoning: the reasoning item's summary on stderr, the text on stdout (${stream})`, async () => {
      const r = await run(['responses', stream, '--model', 'local/thinker', '--show-reasoning', 'why is the sky blue?']);
      expect(r).toEqual({ code: 0, stdout: 'Having thought it over: why is the sky blue?\n', stderr: 'The question is about "why is the sky blue?". I list what I know, weigh it, and answer briefly.\n' });
      const json = await run(['responses', '--json', '--no-stream', '--model', 'local/thinker', 'why?']);
      expect(JSON.parse(json.stdout).output.map((o: { type: string }) => o.type)).toEqual(['reasoning', 'message']);
    });

    it(`responses --save-images writes the image generation item's PNG (${stream})`, async () => {
      const out = mkdtempSync(join(dir, 'resp-img-'));
      const r = await run(['responses', stream, '--model', 'local/painter', '--save-images', out, 'a boat']);
      expect(r).toEqual({ code: 0, stdout: 'Here is an image of a boat.\n', stderr: `image: ${join(out, 'image-1.png')}\n` });
      expect(readFileSync(join(out, 'image-1.png')).subarray(1, 4).toString()).toBe('PNG');
    });

    it(`on a terminal the reasoning is dimmed; --no-color plain (${stream})`, async () => {
      const dim = await run(['chat', stream, '--model', 'local/thinker', '--show-reasoning', 'why?'], { tty: { stderr: true } });
      expect(dim.stderr).toMatch(/^\x1b\[2mThe question is about "why\?"\. .*\x1b\[22m\n$/);
      const plain = await run(['--no-color', 'chat', stream, '--model', 'local/thinker', '--show-reasoning', 'why?'], { tty: { stderr: true } });
      expect(plain.stderr).toMatch(/^The question is about "why\?"\. [^\x1b]*\n$/);
    });

    it(`--save-images writes a decodable PNG; without it stderr names the flag (${stream})`, async () => {
      const out = mkdtempSync(join(dir, 'img-'));
      const r = await run(['chat', stream, '--model', 'local/painter', '--modalities', 'text,image', '--save-images', out, 'a red circle']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('Here is an image of a red circle.\n');
      expect(readdirSync(out)).toEqual(['image-1.png']);
      expect(r.stderr).toBe(`image: ${join(out, 'image-1.png')}\n`);
      const png = readFileSync(join(out, 'image-1.png'));
      expect(png.readUInt32BE(16)).toBe(64);
      const idat = png.indexOf('IDAT');
      expect(inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4))).length).toBe(64 * (64 * 3 + 1));
      const without = await run(['chat', stream, '--model', 'local/painter', 'a cat']);
      expect(without.stderr).toBe('1 image came back (--save-images DIR writes them)\n');
      expect(without.stdout).not.toMatch(/base64/);
      const json = await run(['chat', stream, '--json', '--model', 'local/painter', 'a cat']);
      expect(json.stderr).toBe('');
      expect(json.stdout).toMatch(/data:image\/png;base64,/);
    });
  }

  it('--modalities is sent; a text model asked for images answers in text; a bad value is refused before sending', async () => {
    expect(await run(['chat', '--model', 'local/echo', '--modalities', 'text,image', 'x'])).toEqual({ code: 0, stdout: 'x\n', stderr: '' });
    expect(chatBodies().at(-1)!.modalities).toEqual(['text', 'image']);
    expect((await run(['chat', '--model', 'local/echo', '--modalities', 'smell', 'x'])).code).toBe(2);
  });

  it('--web sends the web plugin; citations are listed on stderr on a terminal, kept in --json', async () => {
    const r = await run(['chat', '--model', 'local/echo', '--web', 'rivers of Europe'], { tty: { stderr: true } });
    expect(r.code).toBe(0);
    expect(chatBodies().at(-1)!.plugins).toEqual([{ id: 'web' }]);
    expect(r.stdout).toBe('rivers of Europe\n');
    expect(r.stderr).toMatch(/^\[1\] rivers \(result 1\) <https:\/\/example.org\/search\/rivers>\n\[2\]/);
    const piped = await run(['chat', '--model', 'local/echo', '--plugin', 'web,max_results=3', 'x']);
    expect(piped.stderr).toBe('');
    expect(chatBodies().at(-1)!.plugins).toEqual([{ id: 'web', max_results: 3 }]);
    const json = await run(['chat', '--json', '--model', 'local/echo', '--web', 'x']);
    expect(JSON.parse(json.stdout).choices[0].message.annotations[0].type).toBe('url_citation');
  });

  it('GET /v1/models lists each model with its modalities and parameters', async () => {
    const r = await run(['api', '/v1/models']);
    const models = JSON.parse(r.stdout).data as any[];
    const vision = models.find((m) => m.id === 'local/vision');
    expect(vision.architecture.input_modalities).toEqual(['text', 'image', 'file', 'audio']);
    expect(models.find((m) => m.id === 'local/painter').architecture.output_modalities).toEqual(['text', 'image']);
    expect(models.find((m) => m.id === 'local/tools').supported_parameters).toContain('tools');
  });
});

describe('the emulator streams what it answers whole', () => {
  it('local/tools, local/thinker, local/painter, a schema and citations: the assembled stream equals the non-streamed message', async () => {
    const client = new RouterClient({ apiKey: env.ROUTER_API_KEY, apiRoot: env.ROUTER_API_ROOT });
    const two = [weather(), { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { terms: { type: 'array', items: { type: 'string' } }, n: { type: 'integer', minimum: 2, maximum: 9 } }, required: ['terms', 'n'] } } }];
    const asks = [
      { model: 'local/tools', tools: two, messages: [{ role: 'user' as const, content: 'get_weather and lookup' }] },
      { model: 'local/thinker', messages: [{ role: 'user' as const, content: 'why?' }] },
      { model: 'local/painter', messages: [{ role: 'user' as const, content: 'a boat' }] },
      { model: 'local/lorem', plugins: [{ id: 'web' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'number' } } } } }, messages: [{ role: 'user' as const, content: 'hi' }] },
    ];
    try {
      for (const ask of asks) {
        const whole = (await client.chat.create(ask)).choices[0]!.message as Record<string, any>;
        const assembler = new MessageAssembler();
        for await (const chunk of await client.chat.stream(ask)) assembler.add(chunk);
        const streamed = assembler.message() as Record<string, any>;
        const { refusal: _r, ...rest } = whole;
        if (rest.reasoning === null) delete rest.reasoning;
        // Call ids are made per request.
        for (const m of [rest, streamed]) m.tool_calls?.forEach((c: { id: string }) => (c.id = 'id'));
        expect(streamed).toEqual(rest);
      }
    } finally {
      await client.close();
    }
  });
});
