import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Session 65's review of the packed CLI (task r17).
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('chat hides the start of a key an answer cuts short the same streamed, --no-stream, --json and responses', async () => {
  const cut = t.apiKey.slice(0, 30);
  // Was: --no-stream showed "cut: ****" while streamed and --json printed the key's first 30 characters.
  for (const extra of [[], ['--no-stream']]) {
    const r = await run(['chat', '--model', 'local/echo', ...extra, `cut: ${cut}`]);
    expect(r).toMatchObject({ code: 0, stdout: 'cut: ****\n' });
    const mid = await run(['chat', '--model', 'local/echo', ...extra, `a ${cut}! b`]);
    expect(mid).toMatchObject({ code: 0, stdout: 'a ****! b\n' });
  }
  for (const extra of [[], ['--no-stream']]) {
    const json = await run(['chat', '--model', 'local/echo', '--json', ...extra, `cut: ${cut}`]);
    expect(json.code).toBe(0);
    expect(json.stdout).not.toContain(t.apiKey.slice(0, 16));
    expect(json.stdout).toContain('cut: ****');
  }
  expect(await run(['responses', '--model', 'local/echo', `cut: ${cut}`])).toMatchObject({ code: 0, stdout: 'cut: ****\n' });
});

it('--show-reasoning hides a key in use that the reasoning says back', async () => {
  // Was: stderr held the key ('The question is about "my key sk-rt-v1-…"').
  for (const [command, extra] of [['chat', []], ['chat', ['--no-stream']], ['responses', []], ['responses', ['--no-stream']]] as const) {
    const r = await run([command, '--model', 'local/thinker', '--show-reasoning', ...extra, `my key ${t.apiKey} ok`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('about "my key **** ok"');
    expect(r.stderr).not.toContain(t.apiKey.slice(0, 16));
  }
});
