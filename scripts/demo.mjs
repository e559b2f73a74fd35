// Starts the built-in emulator, runs `router chat` against it, prints the answer, stops the emulator.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'router.cjs');

/** A word as a shell reads it back: bare when it holds nothing a shell would take, else single-quoted. */
const shellWord = (word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** The demo's last words: the next step, on your own emulator. */
const NEXT = `
That was the demo (its emulator stops now). Next, your own:
  router serve --port 8080 --state ./state      # in a terminal of its own; it prints the keys
  router config init                            # in another: the API root and keys it printed
  router chat --model local/lorem "write 12 words"
Then read README.md from "First chat" on, and docs/ for every command.
`;
const state = mkdtempSync(join(tmpdir(), 'router-demo-'));
const server = spawn(process.execPath, [bin, 'serve', '--port', '0', '--state', state, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
// However the demo ends (done, a step that failed, Ctrl-C), the emulator stops and its folder goes.
const stopped = new Promise((r) => server.once('exit', r));
async function cleanUp() {
  if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
  await stopped;
  rmSync(state, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => cleanUp().then(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
}
try {
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`emulator exited with ${code}`)));
  });
  const { api_root, api_key, management_key } = JSON.parse(first);
  // Config and state (conversations, the usage ledger, jobs) of the demo's own: it leaves no trace
  // in the user's (the next chat -c does not continue the demo, router usage does not count it).
  const env = { ...process.env, ROUTER_API_ROOT: api_root, ROUTER_API_KEY: api_key, ROUTER_MANAGEMENT_KEY: management_key, ROUTER_CONFIG_DIR: join(state, 'config'), ROUTER_STATE_DIR: join(state, 'cli-state'), ROUTER_PROFILE: '', ROUTER_MODEL: '' };
  // Each step is printed as a shell runs it (quoted, its stdin as a pipe), with file names relative to
  // the folder it runs in: pasted where those files are, against a `router serve`, it runs as shown.
  const run = (args, input) => {
    const line = `router ${args.map(shellWord).join(' ')}`;
    process.stderr.write(`\n$ ${input ? `echo ${shellWord(input)} | ${line}` : line}\n`);
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: state, env, input, stdio: [input ? 'pipe' : 'ignore', 'inherit', 'inherit'] });
    // Ctrl-C reaches the step too (the same process group): the demo stops there.
    if (r.status === 130 || r.signal) throw Object.assign(new Error('stopped'), { exitCode: 130 });
    if (r.status !== 0) process.exitCode = r.status ?? 1;
  };
  process.stderr.write(`emulator running at ${api_root}\n`);
  run(['chat', '--model', 'local/lorem', '--usage', 'Tell me about rivers in 40 words']);
  run(['chat', '--model', 'local/echo', '--system', 'Repeat after me'], 'Hello from stdin!');
  const requests = ['Name a river', 'write 6 words', 'Say hello']
    .map((content, i) => JSON.stringify({ custom_id: `q${i + 1}`, body: { messages: [{ role: 'user', content }] } }))
    .join('\n');
  writeFileSync(join(state, 'requests.jsonl'), requests);
  run(['batch', 'create', 'requests.jsonl', '--model', 'local/lorem', '--watch', '--interval', '0.2', '--results', 'results.jsonl']);
  for (const line of readFileSync(join(state, 'results.jsonl'), 'utf8').trim().split('\n')) {
    const r = JSON.parse(line);
    process.stdout.write(`${r.custom_id}: ${r.response.body.choices[0].message.content}\n`);
  }
  run(['speak', 'Hello from the router emulator.', '--voice', 'alloy', '--model', 'local/tts', '-o', 'hello.mp3', '--json']);
  // Beyond text: a picture, a JSON schema, a script as a tool, and a cost cap.
  writeFileSync(join(state, 'dot.png'), Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64'));
  run(['chat', '--model', 'local/vision', '-a', 'dot.png', 'What is in this picture?']);
  run(['chat', '--model', 'local/lorem', '--schema', '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}', 'Name a city']);
  const weather = { type: 'function', function: { name: 'weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, command: `${JSON.stringify(process.execPath)} -e "process.stdout.write('sunny, 21 C')"` };
  writeFileSync(join(state, 'tools.json'), JSON.stringify([weather]));
  run(['chat', '--model', 'local/tools', '--tools', 'tools.json', '--verbose', 'What is the weather in Lisbon?']);
  run(['chat', '--model', 'local/lorem', '--max-cost', '0.0001', '--usage', 'write 500 words']);
  process.stderr.write(NEXT);
} catch (err) {
  if (!err.exitCode) process.stderr.write(`demo: ${err.message}\n`);
  process.exitCode = err.exitCode ?? 1;
} finally {
  await cleanUp();
}
