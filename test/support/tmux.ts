import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sayWhySkipped } from './skip-reason.js';
import { waitBound } from './until.js';

/** tmux on this machine (installed by scripts/test-tools.sh); tests that need a terminal skip without it. */
export const HAS_TMUX = !sayWhySkipped(spawnSync('tmux', ['-V']).status !== 0, 'tmux is not installed: the tests on a terminal skip (bash scripts/test-tools.sh installs it)');

/** A key tmux knows by name (Enter, C-c, Up, BSpace): passed as one word on a command line. */
const KEY_NAME = /^[A-Za-z0-9-]+$/;

/** How long close() waits for the shell and its children to finish before it kills what is left. */
const CLOSE_WAIT_MS = 5000;

/** The processes of session `sid` that still run (a zombie has finished: it writes nothing more); none where there is no /proc. */
function sessionMembers(sid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  return entries.flatMap((pid) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return [];
    }
    // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses, so the fields after the last ")".
    const [state, , , session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(session) === sid && state !== 'Z' ? [Number(pid)] : [];
  });
}

/** The pause after each key command: about what starting a tmux process for it took. */
const KEY_GAP_MS = 10;

/** How long the pane stays quiet before waitFor returns a match, and the most it waits for that. */
const SETTLE_MS = 30;
const SETTLE_MAX_MS = 150;

/**
 * One tmux client in control mode (`tmux -C`): commands go in as lines on its stdin, each answer comes back
 * between %begin and %end (or %error), and a %output line tells that the pane printed something. One client
 * for a terminal's whole life: no tmux process started per key or per look at the screen, and the worker's
 * event loop (which also answers for the in-process emulator) never waits on one.
 */
class ControlClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private rest = '';
  private block: { end: string; error: string; lines: string[]; ours: boolean } | undefined;
  private readonly replies: { resolve: (text: string) => void; reject: (err: Error) => void; command: string }[] = [];
  private outputSeen: (() => void)[] = [];
  private exited = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(socket: string) {
    this.child = spawn('tmux', ['-L', socket, '-C', 'attach-session', '-t', 't'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.read(chunk));
    this.child.stdin.on('error', () => {});
    this.child.on('exit', () => {
      this.exited = true;
      for (const r of this.replies.splice(0)) r.reject(new Error(`tmux exited before answering: ${r.command}`));
      this.notify();
    });
  }

  private read(chunk: string): void {
    const lines = (this.rest + chunk).split('\n');
    this.rest = lines.pop()!;
    for (const line of lines) {
      if (this.block) {
        if (line === this.block.end || line === this.block.error) {
          const { lines: text, error, ours } = this.block;
          this.block = undefined;
          const reply = ours ? this.replies.shift() : undefined;
          if (line === error) reply?.reject(new Error(`tmux: ${reply.command}: ${text.join(' ')}`));
          else reply?.resolve(text.map((l) => `${l}\n`).join(''));
        } else this.block.lines.push(line);
      } else if (line.startsWith('%begin ')) {
        // "%begin TIME NUMBER FLAGS": flags 1 for a command of this client (the attach itself answers with 0).
        const [, time, number, flags] = line.split(' ');
        const tail = `${time} ${number} ${flags}`;
        this.block = { end: `%end ${tail}`, error: `%error ${tail}`, lines: [], ours: flags === '1' };
      } else if (line.startsWith('%output ')) this.notify();
    }
  }

  private notify(): void {
    for (const wake of this.outputSeen.splice(0)) wake();
  }

  /**
   * Sends one command line once the ones before it are answered (and `gapMs` after the last key), and resolves with
   * what it printed. Keys go out one command at a time, as apart as a tmux process per key had them: a program reads
   * "text", Ctrl-C and "more text" as the separate keypresses a person makes, not as one chunk.
   */
  command(line: string, gapMs = 0): Promise<string> {
    const reply = this.queue.then(
      () =>
        new Promise<string>((resolve, reject) => {
          if (this.exited) return reject(new Error(`tmux is gone: ${line}`));
          this.replies.push({ resolve, reject, command: line });
          this.child.stdin.write(`${line}\n`);
        }),
    );
    const pause = () => new Promise<void>((r) => (gapMs > 0 ? setTimeout(r, gapMs) : r()));
    this.queue = reply.then(pause, pause);
    return reply;
  }

  /** Resolves true when the pane next prints something, or false after `ms` (a screen can change without output). */
  outputOrTimeout(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.outputSeen.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/**
 * A real terminal: an interactive bash in a tmux pane on a private server, driven by keys
 * (send-keys) and read from the screen (capture-pane), as a person would.
 */
export class Terminal {
  private readonly socket = `router-test-${randomBytes(4).toString('hex')}`;
  private readonly control: ControlClient;
  /** The shell's process id, which is also its session's (tmux starts each pane in a session of its own). */
  private readonly shellPid: number;
  /** A key or resize tmux refused: thrown by the next look at the screen. */
  private failure: Error | undefined;

  constructor(env: Record<string, string>, shell: string[] = ['bash', '--norc', '--noprofile']) {
    const merged: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...env, PS1: '$ ', TERM: 'xterm-256color' })) if (v !== undefined) merged[k] = v;
    const pid = execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', 'new-session', '-d', '-P', '-F', '#{pane_pid}', '-s', 't', '-x', '160', '-y', '50', ...shell], { env: merged });
    this.shellPid = Number(pid.toString().trim());
    this.control = new ControlClient(this.socket);
  }

  private send(line: string): void {
    this.control.command(line, KEY_GAP_MS).catch((err: Error) => (this.failure ??= err));
  }

  /** Types text literally (no Enter). */
  type(text: string): void {
    // As bytes in hexadecimal: no quoting of tmux's command language to get right.
    this.send(`send-keys -t t -H ${[...Buffer.from(text)].map((b) => b.toString(16).padStart(2, '0')).join(' ')}`);
  }

  /**
   * Pastes text as a terminal does (its newlines as Enter), in bracketed paste's markers when the program
   * asked for them (ESC[?2004h), as tmux's paste-buffer -p does.
   */
  paste(text: string): void {
    const file = join(mkdtempSync(join(tmpdir(), 'router-paste-')), 'text');
    writeFileSync(file, text);
    this.send(`load-buffer -b paste ${file}`);
    this.send('paste-buffer -p -d -b paste -t t');
  }

  /** Sends named keys: Enter, C-c, C-d, Tab. */
  keys(...keys: string[]): void {
    for (const key of keys) if (!KEY_NAME.test(key)) throw new Error(`not a key name: ${JSON.stringify(key)}`);
    this.send(`send-keys -t t ${keys.join(' ')}`);
  }

  /** Types a command line and presses Enter. */
  run(line: string): void {
    this.type(line);
    this.keys('Enter');
  }

  /** Resizes the window, as a person dragging its corner would. */
  resize(columns: number, rows: number): void {
    this.send(`resize-window -t t -x ${columns} -y ${rows}`);
  }

  /** The screen's text; `escapes`: with the sequences that set its colors and attributes. */
  async screen(escapes = false): Promise<string> {
    const text = await this.control.command(`capture-pane -p -J ${escapes ? '-e ' : ''}-t t -S -300`);
    if (this.failure) throw this.failure;
    return text;
  }

  /** The screen's rows as the window shows them: a line wider than the window is two rows (screen() joins them). */
  async rows(): Promise<string[]> {
    const text = await this.control.command('capture-pane -p -t t -S -300');
    if (this.failure) throw this.failure;
    return text.split('\n');
  }

  /**
   * Looks at the screen each time the pane prints (and every 100 ms) until `pattern` is on it; returns that screen once
   * the pane has been quiet for a moment (SETTLE_MS, at most SETTLE_MAX_MS): a program that printed a line is usually
   * still drawing what follows it (a prompt), and keys sent before it is drawn can land on no prompt at all. Bounded
   * by the rest of the test's bound.
   */
  async waitFor(pattern: RegExp, timeoutMs = waitBound()): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.screen();
      if (pattern.test(s)) {
        for (const end = Date.now() + SETTLE_MAX_MS; Date.now() < end && (await this.control.outputOrTimeout(SETTLE_MS)); );
        return s;
      }
      if (Date.now() > until) throw new Error(`timed out waiting for ${pattern} on the screen:\n${s}`);
      await this.control.outputOrTimeout(100);
    }
  }

  /** Whether the terminal shows its cursor now (a program can hide it, as a spinner does, and must show it again). */
  async cursorVisible(): Promise<boolean> {
    const flag = (await this.control.command("display-message -p -t t '#{cursor_flag}'")).trim();
    if (this.failure) throw this.failure;
    return flag === '1';
  }

  /** Copies what programs write to the terminal, byte for byte, into `file` (a tab, an escape, as sent); undefined: stops. */
  async pipeTo(file: string | undefined): Promise<void> {
    await this.control.command(file === undefined ? 'pipe-pane -t t' : `pipe-pane -t t "cat > '${file}'"`);
    if (this.failure) throw this.failure;
  }

  /** Runs `echo EXIT:$?` in the shell and returns the code of the last command. */
  async lastExit(): Promise<number> {
    // The shell's prompt first: keys sent before it would go to the program that is still exiting.
    await this.waitFor(/(^|\n)\$\s*$/);
    const marker = `EXIT${randomBytes(2).toString('hex')}`;
    this.run(`echo ${marker}:$?`);
    const s = await this.waitFor(new RegExp(`^${marker}:(\\d+)`, 'm'));
    return Number(new RegExp(`^${marker}:(\\d+)`, 'm').exec(s)![1]);
  }

  /**
   * Ends the terminal, and resolves once the shell and everything it started have exited: kill-server only hangs up
   * on them, and a shell still writes its history ($HOME/.bash_history) as it goes, into a folder the caller may be
   * removing next (ENOTEMPTY). No event tells that a process that is not this one's child exited: /proc is looked at.
   */
  async close(): Promise<void> {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
    for (const until = Date.now() + CLOSE_WAIT_MS; sessionMembers(this.shellPid).length > 0; ) {
      if (Date.now() > until) {
        for (const pid of sessionMembers(this.shellPid)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Gone since it was looked at.
          }
        }
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
