import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, STACK_FRAME, type TestEnv } from '../helpers.js';

// Every example of every --help and of the README runs verbatim against the emulator, with the key
// setup `router serve` prints, in a folder holding the files the examples name.
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
let t: TestEnv;
let work: string;
let env: Record<string, string>;

const INTERACTIVE = /^router (login|config init)( --profile \w+)?$|^router chat -i\b/;

beforeAll(async () => {
  // Paced as a default `router serve` (20 ms a request): an example too slow for a user fails here.
  t = await startTestEnv({ batchDelayMs: 20 });
  work = join(t.dir, 'examples');
  const bin = join(t.dir, 'bin');
  mkdirSync(work);
  mkdirSync(bin);
  writeFileSync(join(bin, 'router'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'router'), 0o755);
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
    'key.txt': t.apiKey,
    'tools.json': JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'the weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, command: 'echo 18C and sunny' }]),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(work, name), text);
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
  env = {
    ...t.env,
    PATH: `${bin}:${process.env.PATH}`,
    ROUTER_MANAGEMENT_KEY: t.managementKey,
    ROUTER_CONFIG_DIR: join(t.dir, 'examples-config'),
  };
});
afterAll(() => t.close());

/**
 * Runs the examples of one source in one shell, in order (so `id=$(…)` carries over); returns the
 * failures. Each source has its own copy of the folder, config, state and home, so the two run at
 * once; the serve examples (one port) take turns under a lock.
 */
async function runExamples(examples: string[], name: string): Promise<string[]> {
  const folder = join(t.dir, `work-${name}`);
  cpSync(work, folder, { recursive: true });
  const own = {
    ROUTER_CONFIG_DIR: join(t.dir, `${name}-config`),
    ROUTER_STATE_DIR: join(t.dir, `${name}-cli-state`),
    XDG_STATE_HOME: join(t.dir, `${name}-state-home`),
    XDG_DATA_HOME: join(t.dir, `${name}-data-home`),
    // A home of its own: the completion examples write into the user's shell folders.
    HOME: join(t.dir, `${name}-home`),
  };
  mkdirSync(join(own.XDG_DATA_HOME, 'bash-completion', 'completions'), { recursive: true });
  for (const d of ['.zfunc', '.config/fish/completions', '.local/share/bash-completion/completions']) mkdirSync(join(own.HOME, d), { recursive: true });
  const lines = examples.map((ex, i) => {
    // The emulator runs until stopped: it passes once it prints its API root.
    if (/^router serve\b/.test(ex)) {
      return `flock 9; { ${ex} > serve.${i}.out 2> ex.${i}.err & p=$!; for _ in $(seq 50); do grep -q 'listening\\|api_root' serve.${i}.out && break; sleep 0.1; done; kill $p; wait $p 2>/dev/null; grep -q 'listening\\|api_root' serve.${i}.out && echo "EX ${i} 0" || echo "EX ${i} 1"; }; flock -u 9`;
    }
    return `{ ${ex} ; } > ex.${i}.out 2> ex.${i}.err < /dev/null; echo "EX ${i} $?"`;
  });
  const script = [`exec 9>${JSON.stringify(join(t.dir, 'serve.lock'))}`, ...lines].join('\n');
  // Asynchronous: the emulator answers from this process.
  const child = spawn('bash', ['-c', script], { cwd: folder, env: { ...env, ...own } });
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  await new Promise((done) => child.on('close', done));
  const r = { stdout };
  const failures: string[] = [];
  for (const [i, ex] of examples.entries()) {
    const code = new RegExp(`^EX ${i} (\\d+)$`, 'm').exec(r.stdout)?.[1];
    const err = (() => {
      try {
        return readFileSync(join(folder, `ex.${i}.err`), 'utf8');
      } catch {
        return '';
      }
    })();
    if (code !== '0' || STACK_FRAME.test(err)) failures.push(`${ex}\n  exit ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`);
  }
  return failures;
}

/** "$ …" lines of a help text, continuation lines joined. */
function helpExamples(text: string): string[] {
  const joined = text.replace(/\\\n\s*/g, '');
  return [...joined.matchAll(/^\s+\$ (.+)$/gm)].map((m) => m[1]!.replace(/\s+#\s.*$/, '').trim());
}

/** Commands of the README's sh blocks, with what cannot run as written set aside. */
function readmeExamples(): string[] {
  const md = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ''));
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'))
    // The two install-and-run commands (they are the README's own subject) and placeholders for keys.
    .filter((l) => !/^npm (install|run|link)/.test(l) && !l.includes('…'));
}

describe.concurrent('examples run verbatim', () => {
  it('every --help example of every command', async () => {
    const { buildProgram } = await import('../../dist/cli/main.js');
    const program = await buildProgram();
    const paths: string[][] = [[]];
    const walk = (cmd: typeof program, path: string[]) => {
      for (const sub of cmd.commands) {
        if (sub.name() === 'help') continue;
        paths.push([...path, sub.name()]);
        walk(sub, [...path, sub.name()]);
      }
    };
    walk(program, []);
    const examples: string[] = [];
    for (const p of paths) {
      // The help text as `router … --help` prints it, examples included (commander's afterHelp).
      let cmd = program;
      for (const name of p) cmd = cmd.commands.find((c) => c.name() === name)!;
      let help = '';
      cmd.configureOutput({ writeOut: (str: string) => (help += str) });
      cmd.outputHelp();
      examples.push(...helpExamples(help).filter((e) => !INTERACTIVE.test(e)));
    }
    expect(examples.length).toBeGreaterThan(25);
    expect(await runExamples(examples, 'help')).toEqual([]);
  }, 120_000);

  it('every example of the README', async () => {
    const examples = readmeExamples().filter((e) => !INTERACTIVE.test(e));
    expect(examples.length).toBeGreaterThan(25);
    expect(await runExamples(examples, 'readme')).toEqual([]);
  }, 120_000);
});
