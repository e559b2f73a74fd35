import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
import { encodePng } from '../../src/emulator/models/png.js';
import type { AssembledMessage } from '../../src/client/message-assembler.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';
import { until } from '../support/until.js';
import { processAlive } from '../../src/internal/process.js';

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

describe('a tool command stopped by Ctrl-C', () => {
  it('ends with everything it started (not only its shell), and the run ends with the interrupt', async () => {
    const { runCommand } = await import('../../src/kit/command-tool.js');
    const pidFile = join(dir, 'grandchild.pid');
    const controller = new AbortController();
    // The shell starts a child of its own and waits for it: killing the shell alone would leave it running.
    const running = runCommand(`sleep 300 & echo $! > ${pidFile}; wait`, '{}', controller.signal, { PATH: process.env.PATH ?? '' });
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // States, not 5 s of polls: a loaded machine can take longer to start the shell.
    const pidOf = () => Number(readFileSafe(pidFile)) || 0;
    expect(await until(() => pidOf() > 0)).toBe(true);
    const pid = pidOf();
    expect(alive(pid)).toBe(true);
    const reason = new Error('interrupted');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    // What is left behind sleeps its 300 s; what was stopped is gone: waited for within the test's bound, below 300 s
    // (a bound of 15 s was a time a loaded machine can pass).
    await until(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });
});

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

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

describe('the rounds of a tool loop, counted', () => {
  // A tool whose output is long: the second round's prompt holds it.
  const longTool = () =>
    toolsFile('long.json', [{ type: 'function', function: { name: 'long', description: 'says a lot', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }, command: "cat >/dev/null; yes 'many words of tool output' | head -n 2000" }]);
  const roundsOf = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l).usage);

  it('--usage sums every round, not only the last', async () => {
    const r = await run(['chat', '--no-stream', '--json', '--usage', '--model', 'local/tools', '--tools', longTool(), 'go']);
    expect(r.code).toBe(0);
    const rounds = roundsOf(r.stdout);
    expect(rounds).toHaveLength(2);
    const sum = (k: string) => rounds.reduce((n: number, u: Record<string, number>) => n + u[k]!, 0);
    expect(r.stderr).toContain(`usage: ${sum('prompt_tokens')} prompt + ${sum('completion_tokens')} completion = ${sum('total_tokens')} tokens`);
  });

  it('--max-cost holds every round: one the rest of the cap cannot pay for is refused (exit 4) before it is sent', async () => {
    const [first, second] = roundsOf((await run(['chat', '--no-stream', '--json', '--model', 'local/tools', '--tools', longTool(), 'go'])).stdout);
    // Enough for the first round, not for both.
    const cap = first.cost + second.cost / 2;
    const chats = () => emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).length;
    const before = chats();
    const r = await run(['chat', '--no-stream', '--max-cost', cap.toFixed(6), '--model', 'local/tools', '--tools', longTool(), 'go']);
    expect(r.code).toBe(4);
    // The first round's limit was lowered to fit the cap (said, piped too); the second is refused.
    expect(r.stderr).toMatch(/^note: max tokens lowered to \d+ to stay within --max-cost \$[\d.]+\nerror: this call could cost up to \$[\d.]+, over --max-cost \$[\d.]+, less the \$[\d.]+ this command already spent/);
    expect(chats()).toBe(before + 1);
  });
});

describe('--tools that collide', () => {
  it('two tools of one name are refused before sending, whether or not each has a command', async () => {
    const tool = (command?: string) => ({ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } }, ...(command ? { command } : {}) });
    for (const [name, tools] of [['one-command.json', [tool('echo 1'), tool()]], ['no-command.json', [tool(), tool()]], ['two-commands.json', [tool('echo 1'), tool('echo 2')]]] as const) {
      const before = emu.requestLog.length;
      const r = await run(['chat', '--model', 'local/tools', '--tools', toolsFile(name, [...tools]), 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('error: --tools: two tools are named lookup\n');
      expect(emu.requestLog.length).toBe(before);
    }
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

describe('responses --tools', () => {
  it('a tool with a local "command" is run (issue 44), and its command never goes to the service', async () => {
    const tools = toolsFile('responses-tools.json', [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, command: 'echo sunny' }]);
    const before = emu.requestLog.length;
    const r = await run(['responses', '--model', 'local/tools', '--tools', tools, 'weather']);
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: get_weather answered: sunny\n' });
    const sent = emu.requestLog.slice(before).filter((e) => e.path.endsWith('/responses'));
    expect(sent).toHaveLength(2);
    for (const e of sent) expect(JSON.stringify((e.body as { tools: unknown }).tools)).not.toMatch(/command|echo sunny/);
  });
  it('a "command" on a tool that is not a function: one line, exit 2, nothing sent', async () => {
    const tools = toolsFile('responses-web.json', [{ type: 'web_search', command: 'cat ~/.secret-token' }]);
    const before = emu.requestLog.length;
    const r = await run(['responses', '--model', 'local/tools', '--tools', tools, 'weather']);
    expect(r).toMatchObject({ code: 2, stderr: 'error: --tools: tool 1 is a web_search tool: only function tools have a "command"\n' });
    expect(emu.requestLog.length).toBe(before);
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

describe('a tool command that prints more than is sent back', () => {
  it('the model gets the first 1 MiB and a line saying it was cut', async () => {
    const tools = toolsFile('loud.json', [{ type: 'function', function: { name: 'loud', parameters: { type: 'object', properties: { q: { type: 'string' } } } }, command: "cat >/dev/null; head -c 3000000 /dev/zero | tr '\\0' a" }]);
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'go']);
    expect(r.code).toBe(0);
    // local/tools answers with the results it was given.
    expect(r.stdout).toBe(`From the tool results: loud answered: ${'a'.repeat(1024 * 1024)}\n[router: the output was cut at 1 MiB of 3000000 bytes]\n`);
  });

  it('what it logs on stderr does not use up the room of its stdout: a verbose tool that succeeds still gives its result', async () => {
    const tools = toolsFile('verbose.json', [{ type: 'function', function: { name: 'verbose', parameters: { type: 'object', properties: { q: { type: 'string' } } } }, command: "cat >/dev/null; head -c 2000000 /dev/zero | tr '\\0' l >&2; echo sunny" }]);
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'go']);
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: verbose answered: sunny\n' });
  });

  it('a failing one sends back at most 1 MiB of its stderr and 1 MiB of its stdout, each cut said', async () => {
    const tools = toolsFile('failing.json', [{ type: 'function', function: { name: 'failing', parameters: { type: 'object', properties: { q: { type: 'string' } } } }, command: "cat >/dev/null; head -c 1500000 /dev/zero | tr '\\0' e >&2; head -c 1200000 /dev/zero | tr '\\0' o; exit 4" }]);
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'go']);
    expect(r.code).toBe(0);
    const mib = 1024 * 1024;
    expect(r.stdout).toBe(`From the tool results: failing answered: the command exited with code 4; stderr:\n${'e'.repeat(mib)}\n[router: the stderr was cut at 1 MiB of 1500000 bytes]\nstdout:\n${'o'.repeat(mib)}\n[router: the output was cut at 1 MiB of 1200000 bytes]\n`);
  });
});

describe('a tool command that leaves a process running (an opener, a server it starts)', () => {
  it('its result is what it printed before it exited: the process it left, which holds its stdout, is not waited for', async () => {
    const pidFile = join(dir, 'left-running.pid');
    const tools = toolsFile('starter.json', [{ type: 'function', function: { name: 'starter', parameters: { type: 'object', properties: { q: { type: 'string' } } } }, command: `cat >/dev/null; sleep 600 & echo $! > ${pidFile}; echo started` }]);
    onTestFinished(() => {
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    });
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'go']);
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: starter answered: started\n' });
    // Ended while the process it left still runs (not timed): the defect waits for the sleep, past the test's timeout.
    expect(processAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });
});

describe('a tool call as the terminal shows it', () => {
  it('the model\'s arguments are shown with control characters escaped: an escape sequence cannot hide what ran', async () => {
    const { toolLoop } = await import('../../src/cli/tools/tool-loop.js');
    const { ToolSet, commandTool } = await import('../../src/kit/index.js');
    const { testStreams } = await import('../support/inprocess.js');
    const { IO } = await import('../../src/cli/io/io.js');
    const t = testStreams({ tty: { stdin: false, stdout: false, stderr: true } });
    const io = new IO({}, t.streams);
    // Arguments that are not JSON, as a model may send them: a cursor move and a line erase over the real ones.
    const call = { index: 0, id: 'call_1', type: 'function' as const, function: { name: 'rm', arguments: '{"path":"/"}\x1b[1K\r{"path":"/tmp/x"}' } };
    const set = await ToolSet.open({ tools: [commandTool({ name: 'rm' }, 'cat > /dev/null', { PATH: process.env.PATH ?? '' })] });
    const loop = { set, maxRounds: 2, approve: false, json: false, signal: new AbortController().signal };
    await toolLoop<{ message: AssembledMessage }>(io, loop, [], { message: { role: 'assistant' as const, content: null, tool_calls: [call] } }, async () => ({ message: { role: 'assistant' as const, content: 'done' } }));
    expect(t.stderr()).toBe('tool rm {"path":"/"}\\u001b[1K\\r{"path":"/tmp/x"} -> exit 0\n');
  });
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
