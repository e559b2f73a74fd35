import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { startCliEnv, STACK_FRAME, type CliEnv } from './cli-env.js';
import { startRouterShim, type RouterShim } from './router-shim.js';
import { waitBound } from './until.js';

/**
 * The setup of the tests that run the examples of --help and of the README verbatim: an emulator
 * paced as a default `router serve`, the key setup it prints, and a folder holding the files the
 * examples name. The `router` on the scripts' PATH runs main() in this process (test/support/
 * router-shim.ts); every SPAWN_EVERY-th example, and `router serve`, start the built binary, which
 * proves it runs them too.
 */
const SPAWN_EVERY = 12;

/** A line that runs `router` as a command (not only names it). */
const RUNS_ROUTER = /(^|[|;&(]\s*)router\s/;

/**
 * Whether the i-th example of a file starts the built binary: `router serve`, every SPAWN_EVERY-th, and a command
 * substitution ($(router …)), which reads the run's output through a pipe of bash's own: the shim's writes into it
 * through /proc lost it now and then under load (an empty $(router roles path), twice in six runs beside a full
 * suite), so those run the built binary, as a user's would.
 */
function spawnsBinary(ex: string, i: number): boolean {
  return RUNS_ROUTER.test(ex) && (i % SPAWN_EVERY === 0 || /^router serve\b/.test(ex) || /\$\(router /.test(ex));
}

export const INTERACTIVE = /^router (login|config init)( --profile \w+)?$|^router chat -i\b/;

/** What an example printed, for a check beyond its exit code; `spawned`: run by the built binary, not taken as a terminal. */
export type ExampleLook = (ex: string, printed: { out: Buffer; err: Buffer; spawned: boolean }) => string[];

/**
 * Registers the hooks of an examples file; the function returned runs examples and returns the failures. `env`: more
 * of the examples' environment (NO_COLOR, TERM, ROUTER_SHIM_TERMINAL); `look`: failures found in what one printed.
 */
export function examplesPerFile(opts: { env?: Record<string, string>; look?: ExampleLook } = {}): (examples: string[]) => Promise<string[]> {
  let t: CliEnv;
  let shim: RouterShim;
  let work: string;
  let env: Record<string, string>;
  /** Examples run so far by this file's tests. */
  let ran = 0;
  beforeAll(async () => {
    // Paced as a default `router serve` (20 ms a request): an example too slow for a user fails here.
    t = await startCliEnv({ batchDelayMs: 20 });
    work = join(t.dir, 'examples');
    const bin = join(t.dir, 'bin');
    mkdirSync(work);
    mkdirSync(bin);
    mkdirSync(join(t.dir, 'spool'));
    shim = await startRouterShim(bin, join(t.dir, 'spool'));
    writeExampleFiles(work, t.apiKey);
    env = {
      ...t.env,
      PATH: `${bin}:${process.env.PATH}`,
      ROUTER_MANAGEMENT_KEY: t.managementKey,
      ROUTER_CONFIG_DIR: join(t.dir, 'examples-config'),
      XDG_STATE_HOME: join(t.dir, 'state-home'),
      XDG_DATA_HOME: join(t.dir, 'data-home'),
      // A home of its own: the completion examples write into the user's shell folders.
      HOME: join(t.dir, 'home'),
      ...opts.env,
    };
    // No shell folders made here: the completion examples make their own, as in a fresh home.
    mkdirSync(env.HOME!);
  });
  afterAll(async () => {
    await shim?.close();
    await t?.close();
  });
  return async (examples) => {
    const before = shim.counts();
    const first = ran;
    ran += examples.length;
    const failures = await runExamples(examples, first, work, env, waitBound(), opts.look);
    // Both ways of running an example were used: in this process, and the built binary.
    const after = shim.counts();
    if (failures.length === 0) {
      const spawns = examples.filter((ex, i) => spawnsBinary(ex, first + i));
      expect(after.inProcess - before.inProcess).toBeGreaterThanOrEqual(examples.filter((ex, i) => RUNS_ROUTER.test(ex) && !spawnsBinary(ex, first + i)).length);
      expect(after.spawned - before.spawned).toBeGreaterThanOrEqual(spawns.length);
    }
    return failures;
  };
}

function writeExampleFiles(work: string, apiKey: string): void {
  // As a user's file is: no model in the lines (an example without --model fails, as it would for them).
  const req = (id: string, text: string) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: text }] } });
  const files: Record<string, string> = {
    'requests.jsonl': [req('a', 'first'), req('b', 'second')].join('\n'),
    'notes.txt': 'notes to summarize',
    'review.txt': 'Great product, would buy again.',
    'ticket.json': JSON.stringify({ subject: 'refund', body: 'I want my money back' }),
    'questions.json': JSON.stringify({ urgent: { type: 'noul', instructions: 'Is it urgent?', criteria: { true: 'yes', false: 'no' } } }),
    'history.json': JSON.stringify([{ role: 'user', content: 'hello' }]),
    'dialogue.json': JSON.stringify([{ text: 'Hi there', voice: 'alloy' }, { text: 'Hello', voice: 'sage' }]),
    'docs.txt': 'first document\nsecond document\n',
    'items.jsonl': [{ id: 'one', content: 'the first item' }, { id: 'two', content: 'the second item', metadata: { n: 2 } }, { id: 'three', content: 'something else' }].map((i) => JSON.stringify(i)).join('\n'),
    'key.txt': apiKey,
    'tools.json': JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'the weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, command: 'echo 18C and sunny' }]),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(work, name), text);
  // A folder of notes for embed-multi --files.
  mkdirSync(join(work, 'notes', 'old'), { recursive: true });
  writeFileSync(join(work, 'notes', 'groceries.md'), 'milk, eggs, bread\n');
  writeFileSync(join(work, 'notes', 'old', 'trip.md'), 'a week by the sea\n');
  // A 2x3 PNG for the attachment examples.
  writeFileSync(join(work, 'photo.png'), Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64'));
  // A tiny valid WAV clip for the voice-cloning example.
  const pcm = Buffer.alloc(4800);
  const wav = Buffer.alloc(44);
  wav.write('RIFF', 0); wav.writeUInt32LE(36 + pcm.length, 4); wav.write('WAVEfmt ', 8); wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); wav.writeUInt16LE(1, 22); wav.writeUInt32LE(24000, 24); wav.writeUInt32LE(48000, 28);
  wav.writeUInt16LE(2, 32); wav.writeUInt16LE(16, 34); wav.write('data', 36); wav.writeUInt32LE(pcm.length, 40);
  writeFileSync(join(work, 'me.wav'), Buffer.concat([wav, pcm]));
  // `git diff | router chat …` needs a repository with a change.
  const git = (...a: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: work });
  git('init', '-q');
  writeFileSync(join(work, 'app.py'), 'print("hi")\n');
  git('add', 'app.py');
  git('commit', '-qm', 'init');
  writeFileSync(join(work, 'app.py'), 'print("hello")\n');
}

/**
 * A serve example's own network: `router serve`'s port as written (8080, the default) on a loopback of its own, which
 * no other test, helper or service on the machine holds, so one never waits for another. Where no network namespace
 * can be made, the serve examples of every run on the machine take turns under a lock, as before.
 */
const OWN_NET = `if unshare -rn ip link set lo up 2>/dev/null; then own_net() { unshare -rn bash -c 'ip link set lo up && exec bash "$1"' _ "$1"; }
else exec 9>/tmp/router-examples-serve.lock; own_net() { flock 9 bash "$1"; }; fi`;

/**
 * Runs examples in one shell, in order (so `id=$(…)` carries over), in `work`; returns the failures. \`first\`: the
 * number of examples this file ran before. The shell and
 * what it started are ended once \`ms\` pass (the rest of the test's bound, less a margin to say so): the failure
 * names the example under way then, and the ones not run.
 */
async function runExamples(examples: string[], first: number, work: string, env: Record<string, string>, ms: number, look?: ExampleLook): Promise<string[]> {
  const lines = examples.map((ex, i) => {
    // Numbered in the file, so that no run writes over an earlier run's output.
    const n = first + i;
    // The emulator runs until stopped: it passes once it prints its API root, waited for until it does or exits.
    if (/^router serve\b/.test(ex)) {
      writeFileSync(join(work, `serve.${n}.sh`), `${ex} > serve.${n}.out 2> ex.${n}.err & p=$!
until grep -q 'listening\\|api_root' serve.${n}.out; do kill -0 $p 2>/dev/null || break; sleep 0.1; done
kill $p; wait $p 2>/dev/null; grep -q 'listening\\|api_root' serve.${n}.out
`);
      return `echo "START ${n}"; own_net serve.${n}.sh; echo "EX ${n} $?"`;
    }
    const run = `echo "START ${n}"; { ${ex} ; } > ex.${n}.out 2> ex.${n}.err < /dev/null; echo "EX ${n} $?"`;
    return spawnsBinary(ex, n) ? `export ROUTER_SHIM_SPAWN=1; ${run}; unset ROUTER_SHIM_SPAWN` : run;
  });
  const script = [OWN_NET, ...lines].join('\n');
  // Asynchronous: the emulator answers from this process. A group of its own, to end the examples' children too.
  const child = spawn('bash', ['-c', script], { cwd: work, env, detached: true });
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  let stopped = false;
  const bound = setTimeout(() => {
    stopped = true;
    process.kill(-child.pid!, 'SIGKILL');
  }, ms);
  await new Promise((done) => child.on('close', done));
  clearTimeout(bound);
  const failures: string[] = [];
  for (const [i, ex] of examples.entries()) {
    const n = first + i;
    const code = new RegExp(`^EX ${n} (\\d+)$`, 'm').exec(stdout)?.[1];
    const started = new RegExp(`^START ${n}$`, 'm').test(stdout);
    if (stopped && !started) {
      failures.push(`${examples.length - i} example(s) not run: the test's bound came first`);
      break;
    }
    const errFile = join(work, `ex.${n}.err`);
    const err = existsSync(errFile) ? readFileSync(errFile, 'utf8') : '';
    if (stopped && code === undefined) failures.push(`${ex}\n  still running when the test's bound came: ${err.trim().split('\n').slice(-3).join(' | ')}`);
    else if (code !== '0' || STACK_FRAME.test(err)) failures.push(`${ex}\n  exit ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`);
    else if (look) {
      const outFile = join(work, `ex.${n}.out`);
      const out = existsSync(outFile) ? readFileSync(outFile) : Buffer.alloc(0);
      failures.push(...look(ex, { out, err: existsSync(errFile) ? readFileSync(errFile) : Buffer.alloc(0), spawned: spawnsBinary(ex, n) }).map((f) => `${ex}\n  ${f}`));
    }
  }
  return failures;
}
