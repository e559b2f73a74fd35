/** Tool commands at their edges: Ctrl-C, rounds counted against --usage and --max-cost, clashing names, responses --tools, big or lingering output, how a call is shown. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
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

function toolsFile(name: string, tools: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(tools));
  return path;
}

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

describe('--tools names', () => {
  it('a name the API does not take is refused before sending, in chat and responses', async () => {
    for (const [cmd, tool] of [['chat', { type: 'function', function: { name: 'get weather!', parameters: { type: 'object' } }, command: 'echo 1' }], ['responses', { type: 'function', name: 'x'.repeat(65), parameters: { type: 'object' } }]] as const) {
      const before = emu.requestLog.length;
      const r = await run([cmd, '--model', 'local/tools', '--tools', toolsFile(`bad-name-${cmd}.json`, [tool]), 'x']);
      // Was sent: the service's 400 ("tools[0].function.name must be 1 to 64 letters, digits, _ or -").
      expect(r.stderr).toMatch(/^error: --tools: tool 1 is named "(get weather!|x{65})": a tool's name is 1 to 64 letters, digits, _ or -, as the API takes it\n$/);
      expect(r.code).toBe(2);
      expect(emu.requestLog.length).toBe(before);
    }
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
