import { expect, it } from 'vitest';
import { cliEnvPerFile } from '../support/cli-env.js';
import type { CliEnv } from '../support/cli-env.js';

// Issue 46: nothing cut in silence. An answer cut at its length limit, or whose limit --max-cost
// lowered, says so on stderr when piped too; --no-stdin (ROUTER_NO_STDIN) leaves stdin alone.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a streamed answer cut at --max-tokens says so on stderr, piped', async () => {
  const r = await run(['chat', '--model', 'local/lorem', '--max-tokens', '5', 'write 50 words']);
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split(/\s+/)).toHaveLength(5);
  expect(r.stderr).toBe('note: the answer was cut at its length limit (5 tokens; --max-tokens N raises it)\n');
});

it('a --json answer cut at its limit says so too, and one that ends by itself says nothing', async () => {
  const cut = await run(['chat', '--json', '--model', 'local/lorem', '--max-tokens', '5', 'write 50 words']);
  expect(JSON.parse(cut.stdout).choices[0].finish_reason).toBe('length');
  expect(cut.stderr).toBe('note: the answer was cut at its length limit (5 tokens; --max-tokens N raises it)\n');
  const whole = await run(['chat', '--model', 'local/lorem', 'write 5 words']);
  expect(whole.stderr).toBe('');
});

it('max tokens that --max-cost lowered, and the answer cut there: both said, piped', async () => {
  const r = await run(['chat', '--model', 'local/lorem', '--max-cost', '0.0001', 'write 500 words']);
  expect(r.code).toBe(0);
  const [lowered, cut] = r.stderr.trim().split('\n');
  expect(lowered).toMatch(/^note: max tokens lowered to (\d+) to stay within --max-cost \$0\.0001$/);
  const tokens = /lowered to (\d+)/.exec(lowered!)![1];
  expect(cut).toBe(`note: the answer was cut at its length limit (${tokens} tokens, lowered by --max-cost; raise --max-cost for more)`);
});

it('a response cut at --max-output-tokens says so on stderr, piped', async () => {
  const r = await run(['responses', '--model', 'local/lorem', '--max-output-tokens', '16', 'write 50 words']);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('note: the response is incomplete (cut at its length limit, 16 output tokens; --max-output-tokens N raises it)\n');
});

it('--no-stdin and ROUTER_NO_STDIN: a piped stdin is not read; the prompt is the arguments', async () => {
  for (const [flags, env] of [[['--no-stdin'], {}], [[], { ROUTER_NO_STDIN: '1' }]] as const) {
    const r = await run(['chat', ...flags, '--model', 'local/echo', 'about a.txt'], env, 'b.txt\nc.txt\n');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('about a.txt\n');
  }
});

it('--no-stdin refuses what would read stdin, naming why (exit 2)', async () => {
  const dash = await run(['chat', '--no-stdin', '--model', 'local/echo', 'before', '-'], {}, 'x');
  expect(dash).toMatchObject({ code: 2, stderr: 'error: - (the prompt): stdin is not read (--no-stdin)\n' });
  const none = await run(['chat', '--model', 'local/echo'], { ROUTER_NO_STDIN: '1' }, 'x');
  expect(none).toMatchObject({ code: 2, stderr: 'error: no prompt: give it as arguments (stdin is not read: ROUTER_NO_STDIN is set)\n' });
  const system = await run(['chat', '--no-stdin', '-s', '@-', '--model', 'local/echo', 'hi'], {}, 'x');
  expect(system).toMatchObject({ code: 2, stderr: 'error: --system @-: stdin is not read (--no-stdin)\n' });
  expect(t.requests().filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(0);
});
