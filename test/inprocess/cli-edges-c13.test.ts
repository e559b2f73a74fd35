import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Session 65's edges of the CLI a user meets (task c13).
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a command that sends no chat model neither checks nor names the default one', async () => {
  expect((await run(['config', 'set', 'model', 'local/judge', '--profile', 'chatty'])).code).toBe(0);
  const env = { ROUTER_STATE_DIR: `${t.dir}/state-chatty`, ROUTER_MANAGEMENT_KEY: t.managementKey };
  // Was: "note: the environment goes before profile "chatty" for model (ROUTER_MODEL) …" of credits and models.
  expect(await run(['--profile', 'chatty', 'credits'], { ...env, ROUTER_MODEL: 'local/echo' })).toMatchObject({ code: 0, stderr: '' });
  expect(await run(['--profile', 'chatty', 'models'], { ...env, ROUTER_MODEL: 'local/echo' })).toMatchObject({ code: 0, stderr: '' });
  // Was: exit 2, "ROUTER_MODEL must look like <author>/<slug> …", of a command that never sends it.
  expect(await run(['--profile', 'chatty', 'credits'], { ...env, ROUTER_MODEL: 'stale' })).toMatchObject({ code: 0, stderr: '' });
  // A chat still reads, checks and names it.
  expect((await run(['--profile', 'chatty', 'chat', 'hi'], { ...env, ROUTER_MODEL: 'stale' })).stderr).toMatch(/^error: ROUTER_MODEL must look like/);
  const chat = await run(['--profile', 'chatty', 'chat', 'hi'], { ...env, ROUTER_MODEL: 'local/echo' });
  expect(chat).toMatchObject({ code: 0, stdout: 'hi\n', stderr: 'note: the environment goes before profile "chatty" for model (ROUTER_MODEL): unset it to use the profile\'s\n' });
});

it('router api: what a POST made is named after a failure when its answer is over 1 MiB too', async () => {
  const body = (n: number) => JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'x'.repeat(n) }] });
  for (const size of [1000, 1_200_000]) {
    const r = await run(['api', 'POST', '/v1/chat/completions', '--input', '-', '--jq', 'error("boom")'], {}, body(size));
    expect(r.code).not.toBe(0);
    // Was, for the 1.2 MB answer: "error: --jq: boom" alone, the completion made and its id lost.
    expect(r.stderr).toMatch(/^error: --jq: boom\nPOST \/v1\/chat\/completions made chat\.completion gen-\S+\n$/);
  }
});

it('chat hides a key in use that the model says back, streamed or not, --json too', async () => {
  const prompt = `my key is ${t.apiKey}, keep it`;
  // Was: the key printed back on stdout (runCli refuses any output that holds it).
  for (const extra of [[], ['--no-stream']]) {
    const r = await run(['chat', '--model', 'local/echo', ...extra, prompt]);
    expect(r).toMatchObject({ code: 0, stdout: 'my key is ****, keep it\n' });
  }
  const json = await run(['chat', '--model', 'local/echo', '--json', prompt]);
  expect(json.code).toBe(0);
  expect(json.stdout).toContain('****');
  const responses = await run(['responses', '--model', 'local/echo', prompt]);
  expect(responses).toMatchObject({ code: 0, stdout: 'my key is ****, keep it\n' });
});
