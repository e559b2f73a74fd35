import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { shellStatus } from '../support/run-process.js';

// Stalls obey --timeout and Ctrl-C: a proxy that takes the connection and never answers, and a
// reader of stdout (or of -o) that stops reading.
let t: TestEnv;
let silent: Server;
let proxyUrl: string;
const held: Socket[] = [];

beforeAll(async () => {
  t = await startTestEnv();
  silent = createServer((socket) => void held.push(socket.on('error', () => {})));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await t.close();
});

interface Ended {
  code: number | null;
  stderr: string;
}

/** Processes started here that have not ended: killed after the tests (a test that hung on one ended by its timeout). */
const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** CPU time (user + system) process `pid` has used, in ms; 0 once it is gone. */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** Starts router; its exit code once it has ended. */
function started(args: string[], env: Record<string, string>, stdout: 'ignore' | number = 'ignore'): { child: ChildProcess; stderr: () => string; closed: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...t.env, ...env }, stdio: ['ignore', stdout, 'pipe'] });
  running.add(child);
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const closed = new Promise<number | null>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve(shellStatus(code, signal));
    }),
  );
  return { child, stderr: () => stderr, closed };
}

/**
 * Runs router with stdout to `stdoutFd` (else ignored); SIGINT once `interruptWhen` holds (the command is in the wait
 * under test: its handlers are up), then `afterMs` more. Waits for its exit, however long: a wait that Ctrl-C or
 * --timeout does not end runs on past the test's timeout, which fails the test (the process is killed after it). If
 * the wait under test is not reached in 45 s (a loaded machine takes seconds to start a router), it is killed: code null.
 */
async function run(args: string[], env: Record<string, string>, opts: { interruptWhen?: (pid: number) => boolean; afterMs?: number; stdoutFd?: number } = {}): Promise<Ended> {
  const { child, stderr, closed } = started(args, env, opts.stdoutFd);
  let ended = false;
  void closed.then(() => (ended = true));
  const { interruptWhen } = opts;
  if (interruptWhen) {
    void until(() => ended || interruptWhen(child.pid!)).then(async (ready) => {
      if (ended) return;
      if (!ready) return void child.kill('SIGKILL');
      if (opts.afterMs) await new Promise((r) => setTimeout(r, opts.afterMs));
      child.kill('SIGINT');
    });
  }
  const code = await closed;
  return { code, stderr: stderr() };
}

/** Whether the emulator has been asked `path` since this was called. */
function sent(path: string): () => boolean {
  t.clearRequests();
  return () => t.requests().some((r) => r.path === path);
}

/** The warning of a key sent over plain http:// to another machine (router.invalid), said once a run before the first call. */
const inTheClear = 'warning: the API key goes to router.invalid:9 over plain http://, unencrypted: anyone on the way can read it (use https://)\n';
const viaSilentProxy = () => ({ HTTP_PROXY: proxyUrl, http_proxy: '', NO_PROXY: '', no_proxy: '', ROUTER_API_ROOT: 'http://router.invalid:9/api' });

describe('a proxy that takes the connection and never answers', () => {
  // A wait the 500ms --timeout does not bound lasts the 120 s default (or for ever): past this test's timeout, which fails it.
  it('--timeout bounds each attempt: exit 8 after about the timeout, naming the proxy', async () => {
    let connections = held.length;
    const r = await run(['--timeout', '500ms', '--max-retries', '0', 'api', '/v1/models'], viaSilentProxy(), {});
    expect(r.code).toBe(8);
    expect(r.stderr).toBe(`${inTheClear}error: timed out waiting for the proxy ${new URL(proxyUrl).host} to open the way to router.invalid:9 (--timeout 500ms) (the proxy from HTTP_PROXY)\n`);
    expect(held.length - connections).toBe(1);
    // With its retries, each attempt is bounded the same way.
    connections = held.length;
    const chat = await run(['--timeout', '500ms', '--max-retries', '1', 'chat', '--model', 'local/echo', 'hi'], viaSilentProxy());
    expect(chat.code).toBe(8);
    expect(held.length - connections).toBe(2);
  });

  it('Ctrl-C ends the wait for the proxy at once (exit 130)', async () => {
    for (const args of [['api', '/v1/models'], ['chat', '--model', 'local/echo', 'hi']]) {
      const connections = held.length;
      const r = await run(args, viaSilentProxy(), { interruptWhen: () => held.length > connections });
      expect(r.code).toBe(130);
      expect(r.stderr).toBe(`${inTheClear}error: interrupted\n`);
    }
  });
});

describe('a --jq filter that never ends', () => {
  // Quick over the null of the check before sending, endless over the answer.
  const endless = ['chat', '--model', 'local/echo', '--jq', 'if . == null then . else last(range(1e12)) end', 'hi'];

  /** Once the answer is asked for, the filter is running when the process has spent 500 ms more CPU: nothing else in it does. */
  function inFilter(): (pid: number) => boolean {
    const asked = sent('/v1/chat/completions');
    let base: number | undefined;
    return (pid) => {
      if (base === undefined && asked()) base = cpuMsOf(pid);
      return base !== undefined && cpuMsOf(pid) - base >= 500;
    };
  }

  it('Ctrl-C ends it at once (exit 130); a plain kill too (exit 143)', async () => {
    const r = await run(endless, {}, { interruptWhen: inFilter() });
    expect(r).toMatchObject({ code: 130, stderr: 'error: interrupted\n' });
    const { child, closed } = started(endless, {});
    const inIt = inFilter();
    expect(await until(() => inIt(child.pid!))).toBe(true);
    child.kill('SIGTERM');
    // A filter that SIGTERM does not end runs for ever: past the test's timeout.
    expect(await closed).toBe(143);
  });
});

describe('a --jq filter that kills jq (a stack overflow aborts its runtime)', () => {
  it('is one error line and exit 1: the process ends, with no jq noise of its own', async () => {
    const r = await run(['chat', '--model', 'local/echo', '--jq', 'def f: 1 + f; f', 'hi'], {});
    expect(r).toMatchObject({ code: 1, stderr: 'error: --jq: jq ran out of stack or memory (a filter that recurses without end, or a value too large)\n' });
  });
});

describe('a reader that stops reading', () => {
  /** A FIFO whose reader (this process) never reads; the fd to write it with. */
  function stuckFifo(name: string): { path: string; writer: () => number; close: () => void } {
    const path = join(t.dir, name);
    execFileSync('mkfifo', [path]);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    return { path, writer: () => openSync(path, 'w'), close: () => closeSync(reader) };
  }

  it('Ctrl-C while stdout is blocked exits 130 promptly, never 0', async () => {
    const fifo = stuckFifo('stdout.fifo');
    const fd = fifo.writer();
    try {
      const r = await run(['chat', '--model', 'local/lorem', 'write 200000 words'], {}, { stdoutFd: fd, interruptWhen: sent('/v1/chat/completions'), afterMs: 300 });
      expect(r.code).toBe(130);
      expect(r.stderr).toContain('error: interrupted');
    } finally {
      closeSync(fd);
      fifo.close();
    }
  });

  it('Ctrl-C while speak -o writes to a named pipe nobody reads exits 130 promptly', async () => {
    const fifo = stuckFifo('audio.pcm');
    try {
      const text = Array.from({ length: 3000 }, () => 'word').join(' ');
      const r = await run(['speak', text, '--voice', 'alloy', '--model', 'local/tts', '--format', 'pcm', '-o', fifo.path], { ROUTER_MANAGEMENT_KEY: t.managementKey }, { interruptWhen: sent('/v1/audio/speech'), afterMs: 300 });
      expect(r.stderr).toBe('error: interrupted\n');
      expect(r.code).toBe(130);
    } finally {
      fifo.close();
    }
  });
});
