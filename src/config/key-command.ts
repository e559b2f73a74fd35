/**
 * `api_key_command` and `management_key_command`: a command of the user's (`pass show router`,
 * `op read op://…`) whose stdout is the key, run through the shell only when a key is needed. Its
 * output is kept in memory only, and its environment holds no key of router's.
 */
import { firstWholeWords } from '../internal/key-safe-cut.js';
import { spawn } from 'node:child_process';
import { KEY_SYNTAX } from './settings.js';

/** A key command that gave no key: one line saying what it did instead (never its output). */
export class KeyCommandError extends Error {
  override name = 'KeyCommandError';
}

/** More than any key: a command that prints this much is not printing a key. */
const MAX_OUTPUT = 64 * 1024;
/** Characters of a key command's stderr read for its last line (the rest is not said). */
const ERR_BOUND = 4096;

/** The variables a key command does not get: every ROUTER_…KEY… (the keys router was given). */
export function keyCommandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!/^ROUTER_.*KEY/i.test(k)) out[k] = v;
  return out;
}

/** Runs `command` (named `from` in errors) and returns its stdout, trimmed, as a key. */
export function runKeyCommand(command: string, from: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new KeyCommandError(`${from} ${why}`));
    let child;
    try {
      child = spawn(command, { shell: true, env: keyCommandEnv(env), stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    } catch (err) {
      return fail(`could not be started: ${(err as Error).message}`);
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let errText = '';
    let errCut = false;
    let tooMuch = false;
    const onAbort = () => child.kill('SIGTERM');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => {
      outBytes += c.length;
      if (outBytes > MAX_OUTPUT) {
        tooMuch = true;
        child.kill('SIGTERM');
      } else out.push(c);
    });
    // Bounded by characters, not by reads: one read (a busy process reads late) may hold the lines past the bound.
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      const room = ERR_BOUND - errText.length;
      if (room > 0) errText += text.slice(0, room);
      if (text.length > room) errCut = true;
    });
    child.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      fail(`could not be started: ${err.message}`);
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(signal.reason);
      if (tooMuch) return fail(`printed more than ${MAX_OUTPUT / 1024} KiB: that is not a key`);
      if (code !== 0) {
        // A line the bound cut is left out: it could end inside a key.
        const said = lastLine(errCut ? errText.slice(0, errText.lastIndexOf('\n') + 1) : errText);
        return fail(`failed (${sig ? `ended by ${sig}` : `exit ${code}`})${said ? `: ${said}` : ''}`);
      }
      const text = Buffer.concat(out).toString('utf8').trim();
      if (!text) return fail('printed nothing: its stdout must be the key');
      const lines = text.split(/\r?\n/).length;
      if (lines > 1) return fail(`printed ${lines} lines: its stdout must be the key alone (e.g. pass show router | head -n 1)`);
      if (!KEY_SYNTAX.test(text)) return fail('printed a character no key has (a space, a control character or a non-ASCII letter)');
      resolve(text);
    });
  });
}

/** What the command said last on stderr, on one line, bounded, its control characters shown as spaces. */
function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const line = (lines[lines.length - 1] ?? '').replace(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, ' ');
  return line.length > 200 ? `${firstWholeWords(line, 200)}…` : line;
}
