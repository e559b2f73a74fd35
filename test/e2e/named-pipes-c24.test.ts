import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { runProcess } from '../support/run-process.js';

// One rule for every file a user names (task cli24): a pipe (`<(cmd)`) is read once, as the file's kind allows.
let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t.close());

/** Runs a bash line with $BIN the CLI against the in-process emulator, in the package's folder: stdout, stderr, exit code. */
async function inBash(line: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { status, stdout, stderr } = await runProcess('bash', ['-c', line], { env: { ...process.env, ...t.env, BIN, ROUTER_NO_LOG: '1' } });
  return { code: status, stdout, stderr };
}

/** `node -e` of an ES module importing the package by its name, with the rest of the line as its arguments. */
const library = (code: string, args: string) => `node --input-type=module -e '${code}' ${args}`;

it('the library reads a pipe named as a file: readFragment (bounded as a file is), readAttachment', async () => {
  // Was "not a regular file (a device, a FIFO or a socket)" from both.
  const fragment = library('import { FragmentStore, readFragment } from "router-cli/kit"; const f = await readFragment(process.argv[1], new FragmentStore({ dir: process.env.ROUTER_STATE_DIR })); console.log(f.content)', '<(printf "piped text")');
  expect(await inBash(fragment)).toEqual({ code: 0, stdout: 'piped text\n', stderr: '' });
  const bounded = library('import { FragmentStore, readFragment } from "router-cli/kit"; await readFragment("/dev/zero", new FragmentStore({ dir: process.env.ROUTER_STATE_DIR }), { maxBytes: 10 }).catch((e) => console.log(e.code))', '');
  expect(await inBash(bounded)).toEqual({ code: 0, stdout: 'too_large\n', stderr: '' });
  const attachment = library('import { readAttachment } from "router-cli/kit"; const a = await readAttachment(process.argv[1]); console.log(a.kind, a.mediaType, a.data.length)', '<(printf "a note\\n")');
  expect(await inBash(attachment)).toEqual({ code: 0, stdout: 'file text/plain 7\n', stderr: '' });
});

it("the library's checkInputFile says why a pipe will not do (its requests are read twice)", async () => {
  // Was "give - and pipe the requests into stdin": the CLI's words, and not what batch create does any more.
  const check = library('import { checkInputFile } from "router-cli/batch"; try { checkInputFile(process.argv[1]) } catch (e) { console.log(e.message) }', "<(printf '{}\\n')");
  expect(await inBash(check)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^requests file \/dev\/fd\/\d+: is not a file: a pipe is read once, and a requests file twice \(checked, then sent\): save the requests to a file and give its path\n$/) });
});

it('--mcp <(cmd) is said to be a pipe, not a server, in one line (exit 12, as a data file)', async () => {
  const r = await inBash(`node "$BIN" chat --model local/echo --mcp <(printf '{"a":1}\\n') hi`);
  expect(r.stderr).toMatch(/it is a pipe or a device, not a server: --mcp takes a server's command line/);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r).toMatchObject({ code: 12, stdout: '' });
});

it('a device named where a file of settings goes is read within a bound: --mcp /dev/zero, serve --providers /dev/zero', async () => {
  // Both read 2 GiB of memory first (readFile, readFileSync of a device), then said what node said.
  const mcp = await inBash('node "$BIN" chat --model local/echo --mcp /dev/zero hi');
  expect(mcp).toMatchObject({ code: 12, stdout: '', stderr: expect.stringMatching(/^error: MCP server \/dev\/zero: could not start: it is a pipe or a device, not a server: --mcp takes/) });
  const serve = await inBash('node "$BIN" serve --port 0 --providers /dev/zero');
  expect(serve).toEqual({ code: 2, stdout: '', stderr: 'error: --providers /dev/zero: larger than 16 MiB, far more than a providers file holds\n' });
});
