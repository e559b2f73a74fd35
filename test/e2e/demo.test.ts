import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';
import { runProcess } from '../support/run-process.js';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

/**
 * The test's own bound on a demo run, a backstop against a hang: a run is ten processes started one after another
 * (the emulator, eight steps, a tool), about 2.5 s of CPU, and at load 30 on two cores it took 66 s.
 */
const DEMO_MS = 240_000;

/** The environment of this process, less the ROUTER_ and XDG_ variables: the demo's are its own. */
function demoEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('ROUTER_') && !k.startsWith('XDG_')) env[k] = v;
  return env;
}

/** One whole run of `npm run demo`, with a HOME of its own, for the tests that read what it did. */
const home = mkdtempSync(join(tmpdir(), 'router-demo-home-'));
let run: ReturnType<typeof runProcess> | undefined;
const demoRun = () => (run ??= runProcess(process.execPath, [join(root, 'scripts', 'demo.mjs')], { env: { ...demoEnv(), HOME: home }, timeoutMs: DEMO_MS }));
afterAll(async () => {
  await run;
  rmSync(home, { recursive: true, force: true });
});

// Issue 34, rough edge 2: the demo's chats, ledger lines and config stay in its own temporary folders.
it('npm run demo leaves no trace in the user\'s state or config', async () => {
  const r = await demoRun();
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/q1: /);
  expect(readdirSync(home)).toEqual([]);
}, DEMO_MS + 10_000);

it('Ctrl-C in the middle of npm run demo stops the emulator and removes its folder (exit 130)', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'router-demo-tmp-'));
  try {
    const env = { ...demoEnv(), TMPDIR: tmp };
    // Its own process group, as a shell gives it: Ctrl-C goes to the demo, the emulator and the step running.
    const demo = spawn(process.execPath, [join(root, 'scripts', 'demo.mjs')], { env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((r) => demo.once('exit', (code) => r(code)));
    let stderr = '';
    const apiRoot = await new Promise<string>((resolve, reject) => {
      demo.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /emulator running at (\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      demo.once('exit', (code) => reject(new Error(`the demo exited with ${code} before its emulator ran: ${stderr}`)));
    });
    process.kill(-demo.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(readdirSync(tmp)).toEqual([]);
    await expect(fetch(`${apiRoot}/v1/models`)).rejects.toThrow();
    expect(stderr).not.toMatch(/\n\s+at /);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, DEMO_MS);

// Issue 46: the commands the demo prints paste and run as shown (a pipe for its stdin, the --schema
// JSON quoted), and it ends with the next step.
it('the demo\'s printed commands run as a shell reads them, and it ends with the next step', async () => {
  const demo = await demoRun();
  expect(demo.status, demo.stderr).toBe(0);
  const printed = [...demo.stderr.matchAll(/^\$ (.+)$/gm)].map((m) => m[1]!);
  expect(printed.length).toBeGreaterThan(6);
  expect(demo.stderr.trimEnd()).toMatch(/Next, your own:\n {2}router serve [^\n]+\n {2}router config init[^\n]+\n {2}router chat [^\n]+\nThen read [^\n]+$/);
  const t = await startTestEnv();
  const dir = mkdtempSync(join(tmpdir(), 'router-demo-paste-'));
  try {
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'router'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
    const shell = (line: string) =>
      new Promise<{ code: number | null; out: string }>((done) => {
        const child = spawn('bash', ['-c', line], { cwd: dir, env: { ...process.env, ...t.env, ROUTER_NO_LOG: '1', PATH: `${join(dir, 'bin')}:${process.env.PATH}` }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (c) => (out += c));
        child.on('close', (code) => done({ code, out }));
      });
    // Every line is one a shell parses; those that need no file of the demo's run as printed.
    for (const line of printed) expect(spawnSync('bash', ['-n', '-c', line]).status).toBe(0);
    const echo = printed.find((l) => l.includes('local/echo'))!;
    expect(await shell(echo)).toEqual({ code: 0, out: 'Hello from stdin!\n' });
    const schema = printed.find((l) => l.includes('--schema'))!;
    const answered = await shell(schema);
    expect(answered.code).toBe(0);
    expect(Object.keys(JSON.parse(answered.out))).toEqual(['city']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  }
}, DEMO_MS + 60_000);
