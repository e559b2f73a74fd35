import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Errors in the order a user fixes them: the command line (a bad value, blank text) first, then what the
// settings lack (the key, then a default model or voice), then anything sent. One line each, nothing sent.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const noKey = { ROUTER_API_KEY: '' };

it('speak: a bad -o format, blank text and a missing key are said before a missing voice', async () => {
  t.clearRequests();
  // Was: "no model and no voice" for each of these.
  expect(await run(['speak', '-o', 'out.wav', 'hi'])).toMatchObject({ code: 2, stderr: 'error: -o out.wav: the service produces mp3 or pcm (16-bit little-endian), not wav; name the file .mp3 or .pcm\n' });
  expect(await run(['speak', '--model', 'local/tts', ''])).toMatchObject({ code: 2, stderr: 'error: no text: the argument is blank (an unset or empty "$VAR"?)\n' });
  expect(await run(['speak', 'hi'], noKey)).toMatchObject({ code: 3, stderr: 'error: no API key for profile "default": set ROUTER_API_KEY, or run "router login"\n' });
  // With all of those right, the voice is what is left to say.
  expect(await run(['speak', '--model', 'local/tts', 'hi'])).toMatchObject({ code: 2, stdout: '', stderr: 'error: no voice: give --voice (e.g. alloy), or set a default: router config set voice alloy\n' });
  expect(t.requests()).toHaveLength(0);
});

it('embed: blank text and a missing key are said before a missing model', async () => {
  t.clearRequests();
  expect(await run(['embed', ''])).toMatchObject({ code: 2, stderr: 'error: argument 1 is blank: there is nothing to embed in it\n' });
  expect(await run(['embed', 'hi'], noKey)).toMatchObject({ code: 3, stderr: 'error: no API key for profile "default": set ROUTER_API_KEY, or run "router login"\n' });
  expect(await run(['embed', 'hi'])).toMatchObject({ code: 2, stderr: 'error: no model: give --model (an embedding model, e.g. local/embed), or set a default: router config set embed_model local/embed\n' });
  expect(t.requests()).toHaveLength(0);
});

it('embed -c and embed-multi into a new collection: blank text and a missing key are said before a missing model', async () => {
  t.clearRequests();
  const items = join(t.dir, 'items.jsonl');
  writeFileSync(items, '{"id":"a","content":"hi"}\n');
  const noModel = 'error: collection fresh is new: name the model to embed it with: give --model (an embedding model, e.g. local/embed), or set a default: router config set embed_model local/embed\n';
  expect(await run(['embed', '-c', 'fresh', '--id', 'a', ' '])).toMatchObject({ code: 2, stderr: 'error: the text is blank: there is nothing to embed in it\n' });
  // Was exit 2 naming the model, then (with a model given) exit 3 for the key: two runs to learn what one says.
  expect(await run(['embed', '-c', 'fresh', '--id', 'a', 'hi'], noKey)).toMatchObject({ code: 3, stderr: 'error: no API key for profile "default": set ROUTER_API_KEY, or run "router login"\n' });
  expect(await run(['embed-multi', 'fresh', items], noKey)).toMatchObject({ code: 3, stderr: 'error: no API key for profile "default": set ROUTER_API_KEY, or run "router login"\n' });
  expect(await run(['embed', '-c', 'fresh', '--id', 'a', 'hi'])).toMatchObject({ code: 2, stderr: noModel });
  expect(await run(['embed-multi', 'fresh', items])).toMatchObject({ code: 2, stderr: noModel });
  expect(t.requests()).toHaveLength(0);
});

it('batch run given a pipe as the file (<(cmd), /dev/stdin): the way to give piped requests (batch create reads it once)', async () => {
  const fifo = join(t.dir, 'requests.fifo');
  execFileSync('mkfifo', [fifo]);
  t.clearRequests();
  // Was: "… is not a file", no way named. batch create takes the pipe (test/e2e/cli-edges-c23.test.ts).
  expect(await run(['batch', 'run', fifo, '--model', 'local/echo'])).toMatchObject({ code: 2, stderr: `error: requests file ${fifo}: is not a file: save the requests to a file and give its path (batch run reads its file again)\n` });
  expect(t.requests()).toHaveLength(0);
});
