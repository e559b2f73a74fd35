import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { startCliEnv, STACK_FRAME, type CliEnv } from './cli-env.js';
import { startRouterShim, type RouterShim } from './router-shim.js';

/**
 * The setup of the tests that run the examples of --help and of the README verbatim: an emulator
 * paced as a default `router serve`, the key setup it prints, and a folder holding the files the
 * examples name. The `router` on the scripts' PATH runs main() in this process (test/support/
 * router-shim.ts); every SPAWN_EVERY-th example, and `router serve`, start the built binary, which
 * proves it runs them too.
 */
const SPAWN_EVERY = 12;

export const INTERACTIVE = /^router (login|config init)( --profile \w+)?$|^router chat -i\b/;

/** Registers the hooks of an examples file; the function returned runs examples and returns the failures. */
export function examplesPerFile(): (examples: string[]) => Promise<string[]> {
  let t: CliEnv;
  let shim: RouterShim;
  let work: string;
  let env: Record<string, string>;
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
    };
    // No shell folders made here: the completion examples make their own, as in a fresh home.
    mkdirSync(env.HOME!);
  });
  afterAll(async () => {
    await shim?.close();
    await t?.close();
  });
  return async (examples) => {
    const failures = await runExamples(examples, work, env);
    // Both ways of running an example were used: in this process, and the built binary.
    const { inProcess, spawned } = shim.counts();
    expect(inProcess).toBeGreaterThan(examples.length / 2);
    expect(spawned).toBeGreaterThanOrEqual(Math.floor(examples.length / SPAWN_EVERY));
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
 * Runs examples in one shell, in order (so `id=$(…)` carries over), in `work`; returns the failures.
 * The serve examples (one port) take turns with other files' under a lock.
 */
async function runExamples(examples: string[], work: string, env: Record<string, string>): Promise<string[]> {
  const lines = examples.map((ex, i) => {
    // The emulator runs until stopped: it passes once it prints its API root. Waited for until it does or exits (60 s at
    // most), not 5 s, which a loaded machine can take to start it.
    if (/^router serve\b/.test(ex)) {
      return `flock 9; { ${ex} > serve.${i}.out 2> ex.${i}.err & p=$!; for _ in $(seq 600); do grep -q 'listening\\|api_root' serve.${i}.out && break; kill -0 $p 2>/dev/null || break; sleep 0.1; done; kill $p; wait $p 2>/dev/null; grep -q 'listening\\|api_root' serve.${i}.out && echo "EX ${i} 0" || echo "EX ${i} 1"; }; flock -u 9`;
    }
    const run = `{ ${ex} ; } > ex.${i}.out 2> ex.${i}.err < /dev/null; echo "EX ${i} $?"`;
    // A command substitution ($(router …)) reads the run's output through a pipe of bash's own: the
    // shim's writes into it through /proc lost it now and then under load (an empty $(router roles
    // path), twice in six runs beside a full suite), so those run the built binary, as a user's would.
    return i % SPAWN_EVERY === 0 || /\$\(router /.test(ex) ? `export ROUTER_SHIM_SPAWN=1; ${run}; unset ROUTER_SHIM_SPAWN` : run;
  });
  const script = [`exec 9>/tmp/router-examples-serve.lock`, ...lines].join('\n');
  // Asynchronous: the emulator answers from this process.
  const child = spawn('bash', ['-c', script], { cwd: work, env });
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  await new Promise((done) => child.on('close', done));
  const failures: string[] = [];
  for (const [i, ex] of examples.entries()) {
    const code = new RegExp(`^EX ${i} (\\d+)$`, 'm').exec(stdout)?.[1];
    const errFile = join(work, `ex.${i}.err`);
    const err = existsSync(errFile) ? readFileSync(errFile, 'utf8') : '';
    if (code !== '0' || STACK_FRAME.test(err)) failures.push(`${ex}\n  exit ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`);
  }
  return failures;
}
