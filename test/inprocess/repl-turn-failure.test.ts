import { expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { typedRepl } from '../support/typed-repl.js';
import { startedForAll } from '../support/for-all.js';

// A `chat -i` turn that fails says what a one-shot chat says of the same failure (which --timeout,
// how many retries), and an answer cut short is said to be left out of the conversation.
const t = startedForAll(() => startCliEnv());

const chats = () => t.requests().filter((r) => r.path === '/v1/chat/completions');

it('a cut answer is said to be dropped; a turn given up after retries names --max-retries', async () => {
  await t.admin('faults', { faults: ['cut,after=5,times=1,path=/chat/completions', '429,retry_after=0,times=2,path=/chat/completions'] });
  t.clearRequests();
  const r = await typedRepl({ ...t.env, NO_COLOR: '1', ROUTER_NO_LOG: '1' }, ['write 300 words', 'then this', 'and this'], { args: ['--model', 'local/lorem', '--max-retries', '1'], stdoutPiped: true });
  expect(r.code, r.stderr).toBe(0);
  // Was: the error alone, the cut text left on the screen as if it were part of the conversation.
  expect(r.stderr).toMatch(/the stream was cut before it was complete[^\n]*\n\(the answer was cut short: it is not kept, and the next message goes without it\)\n/);
  // Was: the 429 without "(after 1 retry; --max-retries sets how many)", which a one-shot chat says.
  expect(r.stderr).toContain('429 Too Many Requests: Injected fault: HTTP 429 (after 1 retry; --max-retries sets how many)\n');
  expect(r.stderr).not.toMatch(/\(the answer was cut short[^\n]*\n[^\n]*\n\(the answer was cut short/);
  // Nothing of the cut exchange went with the next messages (a request refused by a fault is logged without its body).
  expect(chats()).toHaveLength(4);
  expect(chats().at(-1)!.body.messages.map((m: { content: string }) => m.content)).toEqual(['and this']);
});

it('a stalled answer names the --timeout it waited', async () => {
  await t.admin('faults', { faults: ['held,after=1,times=1,path=/chat/completions'] });
  const r = await typedRepl({ ...t.env, NO_COLOR: '1', ROUTER_NO_LOG: '1' }, ['write 3000 words'], { args: ['--model', 'local/lorem', '--timeout', '1s'], stdoutPiped: true });
  expect(r.code, r.stderr).toBe(0);
  // Was: "timed out waiting for 127.0.0.1:…" with no word of which wait, or how to change it.
  expect(r.stderr).toMatch(/error: timed out waiting for [^\n]*\(--timeout 1s\)\n/);
});
