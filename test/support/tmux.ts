import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** tmux on this machine (installed by scripts/test-tools.sh); tests that need a terminal skip without it. */
export const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;

/**
 * A real terminal: an interactive bash in a tmux pane on a private server, driven by keys
 * (send-keys) and read from the screen (capture-pane), as a person would.
 */
export class Terminal {
  private readonly socket = `router-test-${randomBytes(4).toString('hex')}`;

  constructor(env: Record<string, string>, shell: string[] = ['bash', '--norc', '--noprofile']) {
    const merged: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...env, PS1: '$ ', TERM: 'xterm-256color' })) if (v !== undefined) merged[k] = v;
    execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 't', '-x', '160', '-y', '50', ...shell], { env: merged });
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** Types text literally (no Enter). */
  type(text: string): void {
    this.tmux('send-keys', '-t', 't', '-l', text);
  }

  /** Sends named keys: Enter, C-c, C-d, Tab. */
  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', 't', ...keys);
  }

  /** Types a command line and presses Enter. */
  run(line: string): void {
    this.type(line);
    this.keys('Enter');
  }

  /** Resizes the window, as a person dragging its corner would. */
  resize(columns: number, rows: number): void {
    this.tmux('resize-window', '-t', 't', '-x', String(columns), '-y', String(rows));
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-J', '-t', 't', '-S', '-300');
  }

  async waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = this.screen();
      if (pattern.test(s)) return s;
      if (Date.now() > until) throw new Error(`timed out waiting for ${pattern} on the screen:\n${s}`);
      await new Promise((r) => setTimeout(r, 100));
    }
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

  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}
