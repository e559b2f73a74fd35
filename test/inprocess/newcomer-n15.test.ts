import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { typedRepl } from '../support/typed-repl.js';

// Newcomer pass 24 (task n15): a user of simonw's llm and of aichat, from the packed tarball.
let t: CliEnv;
cliEnvPerFile((env) => (t = env));

const sentMessages = () => t.requests().filter((q) => q.path === '/v1/chat/completions').map((q) => (q.body.messages as { content: unknown }[]).at(-1)!.content);

it("chat -i holds back aichat's and llm chat's commands once, naming router's; typed again, the line is sent", async () => {
  const env = { ...t.env, ROUTER_STATE_DIR: join(t.dir, 'state-other-repl'), NO_COLOR: '1' };
  t.clearRequests();
  const lines = ['.help', '.role coder', 'exit', '!multi', ':::', 'hello', '.exit', '.exit'];
  const r = await typedRepl(env, lines, { args: ['--model', 'local/echo'], stdoutPiped: true });
  expect(r.code).toBe(0);
  // Was: each of them sent to the model as a message (billed, kept in the conversation, answered about).
  expect(sentMessages()).toEqual(['hello', '.exit']);
  expect(r.stderr).toContain('note: ".help" was not sent: aichat\'s .help is /help here; typed again, it is sent as a message\n');
  expect(r.stderr).toContain('note: ".role coder" was not sent: aichat\'s .role is /role NAME here (router roles list); typed again');
  expect(r.stderr).toContain('note: "exit" was not sent: /exit ends the session here (Ctrl-D too); typed again');
  expect(r.stderr).toContain('note: "!multi" was not sent: llm\'s !multi: Alt-Enter or Ctrl-J starts a new line here');
  expect(r.stderr).toContain('note: ":::" was not sent: aichat\'s ::: : Alt-Enter or Ctrl-J');
  expect(r.stderr.match(/"\.exit" was not sent/g)).toHaveLength(1);
  expect(r.stdout).toBe('hello\n.exit\n');
});

it('chat -i sends text that only starts like another tool\'s command, and a message of several lines', async () => {
  const env = { ...t.env, ROUTER_STATE_DIR: join(t.dir, 'state-other-repl-text'), NO_COLOR: '1' };
  t.clearRequests();
  const r = await typedRepl(env, ['exit the loop early?', '.helpful tips', 'quit smoking'], { args: ['--model', 'local/echo'], stdoutPiped: true });
  expect(r.code).toBe(0);
  expect(r.stderr).not.toContain('was not sent');
  expect(sentMessages()).toEqual(['exit the loop early?', '.helpful tips', 'quit smoking']);
});
