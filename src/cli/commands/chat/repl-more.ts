/** What `router chat -i` shares with the flags and the shell: /role, /edit, and a history kept across sessions. */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { appendWhole } from '../../../internal/append-whole.js';
import { withFileLock } from '../../../internal/with-file-lock.js';
import { makeDir } from '../../../internal/make-dir.js';
import { readLocalText } from '../../../internal/local-file.js';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stateHome } from '../../../config/state-dir.js';
import { writeWhole } from '../../../internal/write-whole.js';
import type { ChatMessage } from '../../../client/types.js';
import type { GlobalFlags, IO } from '../../io/io.js';
import { addKeyHint, addRetryHint, addTimeoutHint, type Connected } from '../../context.js';
import type { RunContext } from '../../run.js';
import { CHAT_FLAGS, type ChatOptions } from './flags.js';
import { oneCallFlags } from '../../flags/flags.js';
import type { Attachment } from '../../answers/attach.js';
import { usage } from '../../exit-codes.js';
import { TextRedactor } from '../../../internal/redact-text.js';
import { readKeptText, sayKeptProblem } from '../../../internal/kept-state.js';
import { counted } from '../../../internal/counted.js';

/** Lines kept, as a shell's HISTSIZE. */
export const HISTORY_LINES = 1000;

const historyPath = (env: NodeJS.ProcessEnv) => join(stateHome(env), 'repl-history');

/** The lines typed in earlier sessions, newest first (readline's order); a damaged line is left out, alone. */
export function loadHistory(env: NodeJS.ProcessEnv): string[] {
  const text = readKeptText(historyPath(env), 'this session starts with no history');
  if (text === undefined) return [];
  const lines: string[] = [];
  let damaged = 0;
  for (const l of text.split('\n').reverse()) {
    if (lines.length === HISTORY_LINES) break;
    if (!l) continue;
    try {
      const line: unknown = JSON.parse(l);
      if (typeof line === 'string') lines.push(line);
      else damaged++;
    } catch {
      damaged++; // A line edited by hand, or cut: the others stay.
    }
  }
  if (damaged) sayKeptProblem(historyPath(env), `${counted(damaged, 'damaged line')} left out (the others are read; fix them or delete them)`);
  return lines;
}

/** Past this size the file is cut back to its last HISTORY_LINES lines as a line is added. */
const HISTORY_MAX_BYTES = 256 * 1024;

/**
 * Adds the lines `fresh` (this session's, oldest first; taken from it) to the history, one JSON
 * string a line: appended under the file's lock, so that sessions at once each keep theirs (the
 * last to exit no longer overwrites the others'), and cut back past HISTORY_MAX_BYTES. A history
 * that cannot be written is no failure. With logging off (--no-log, ROUTER_NO_LOG, log off)
 * nothing typed is written.
 */
export function saveHistory(env: NodeJS.ProcessEnv, fresh: string[], logging: boolean): void {
  if (!logging || fresh.length === 0) return;
  try {
    const path = historyPath(env);
    makeDir(dirname(path));
    withFileLock(path, () => {
      const added = fresh.splice(0).map((l) => `${JSON.stringify(l)}\n`).join('');
      let size = 0;
      try {
        size = statSync(path).size;
      } catch {
        // None yet.
      }
      if (size + added.length <= HISTORY_MAX_BYTES) return appendWhole(path, added);
      const kept = `${readLocalText(path)}${added}`.split('\n').filter((l) => l !== '').slice(-HISTORY_LINES);
      writeWhole(path, `${kept.join('\n')}\n`);
    });
  } catch {
    // The conversation goes on; the next session starts with the history it can read.
  }
}

/** Flags of one call (`oneCall` in chat's table; --jq goes with --json) that the REPL does not carry out: refused rather than left unsaid. */
const ONE_CALL_FLAGS: Record<string, string> = Object.fromEntries([...oneCallFlags(CHAT_FLAGS), ['jq', '--jq']]);

/**
 * The REPL's options: a one-call flag typed on the command line is refused (exit 2); one a role set
 * (--role, /role) is left out, and said.
 */
export function replOptions(ctx: RunContext<ChatOptions>): void {
  const opts = ctx.opts as Record<string, unknown>;
  const typed = (attr: string) => ['cli', 'env'].includes(ctx.cmd.getOptionValueSource(attr) ?? '');
  // --jq sets json itself (run.ts): what was typed is --jq, and it is refused as such.
  const given = Object.keys(ONE_CALL_FLAGS).filter((attr) => opts[attr] !== undefined && !(attr === 'json' && typed('jq')));
  const refused = given.filter(typed);
  if (refused.length) throw usage(`${refused.map((a) => ONE_CALL_FLAGS[a]).join(', ')} ${refused.length > 1 ? 'apply' : 'applies'} to one call, not to chat -i`);
  for (const attr of given) delete opts[attr];
  if (given.length) ctx.io.err(`role ${String(opts.role)}: ${given.map((a) => ONE_CALL_FLAGS[a]!.slice(2)).join(', ')} left out (one call's, not chat -i's)\n`);
}

/** `/edit`: a message written in $VISUAL or $EDITOR (empty: nothing is sent). */
export async function editMessage(io: IO): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'router-edit-'));
  const file = join(dir, 'message.md');
  try {
    writeFileSync(file, '', { mode: 0o600 });
    const { editFile } = await import('../../io/editor.js');
    await editFile(io, file);
    return readLocalText(file).trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What /model and /role change: the model, and the options it keeps (../../saved/model-options.ts) that are in use. */
export interface ModelInUse {
  model: string | undefined;
  modelOptions: Record<string, unknown>;
  /** The prompt text of the role in use: each message filled into it (see rolePrompt); none, sent as typed. */
  template?: (message: string) => string;
}

/** Takes `model` with its kept options in place of the last one's (flags and a role's settings stay); returns it. */
export async function useModel(ctx: RunContext<ChatOptions>, c: ModelInUse, model: string | undefined): Promise<string | undefined> {
  const { switchModelOptions } = await import('../../saved/model-options.js');
  c.modelOptions = switchModelOptions(ctx.cmd, ctx.opts as Record<string, unknown>, c.modelOptions, model, ctx.env);
  return (c.model = model);
}

/**
 * `/role NAME [key=value …]`: the role's model and system prompt replace those in use (as /model and /system
 * would); its other settings apply where the command line set none, and its prompt text takes each message
 * after. Its placeholders are filled from the values given here, over the --param values chat -i was given,
 * else its defaults; one without a value leaves the role as it was, saying how to give it.
 */
export async function switchRole(ctx: RunContext<ChatOptions>, arg: string, c: ModelInUse & { history: ChatMessage[]; attached: Attachment[] }): Promise<void> {
  const { applyRoleFlag, loadYaml, readRole, roleTexts } = await import('../../saved/roles.js');
  const { fillPrompt, placeholderNames } = await import('../../../kit/placeholders.js');
  const { PlaceholderError } = await import('../../../kit/errors.js');
  const { name, values } = roleArguments(arg);
  await loadYaml();
  const next = readRole(ctx.env, name);
  const params = { ...(ctx.opts as { param?: Record<string, string> }).param, ...values };
  const { prompt, defaults } = roleTexts(next);
  let system: string | undefined;
  try {
    ({ system } = fillPrompt({ system: next.system, prompt }, prompt === undefined ? undefined : '', params, { defaults, of: `role ${name}` }));
  } catch (err) {
    if (!(err instanceof PlaceholderError)) throw err;
    throw usage(`${err.message} (give ${err.missing.length > 1 ? 'each' : 'it'}: /role ${name} ${err.missing.map((n) => `${n}=VALUE`).join(' ')}; $$ writes a literal $)`);
  }
  const unused = Object.keys(values).filter((n) => !placeholderNames(next.system, prompt).includes(n));
  if (unused.length) ctx.io.err(`warning: role ${name} has no ${unused.map((n) => `$${n}`).join(', ')}: ${unused.join(', ')} left unused\n`);
  const opts = ctx.opts as Record<string, unknown>;
  // The last model's options go first, so that the role's settings are taken as the role's, not over them.
  const { switchModelOptions } = await import('../../saved/model-options.js');
  c.modelOptions = switchModelOptions(ctx.cmd, opts, c.modelOptions, undefined, ctx.env);
  opts.role = name;
  const role = await applyRoleFlag(ctx.cmd, opts, ctx.io, async () => ({ mcp: (await ctx.settings()).mcp })).catch(async (err: unknown) => {
    await useModel(ctx, c, c.model);
    throw err;
  });
  replOptions(ctx);
  // The role's attachments go with the next message, as those of -a given with -i do.
  if (role?.settings.attach !== undefined && ctx.cmd.getOptionValueSource('attach') !== 'cli') {
    const { readAttachments } = await import('../../answers/attach.js');
    c.attached.push(...(await readAttachments(ctx.opts.attach?.filter((a) => a !== '-'), ctx.io)));
  }
  const model = role?.settings.model;
  await useModel(ctx, c, typeof model === 'string' ? (await import('./repl-checks.js')).aliasedModel(model, ctx.env) : c.model);
  if (system) {
    c.history.splice(0, c.history.length, ...c.history.filter((m) => m.role !== 'system'));
    c.history.unshift({ role: 'system', content: system });
  }
  c.template = (await import('../../saved/role-params.js')).rolePrompt(next, params);
  ctx.io.err(`role ${name}${c.model ? ` (model ${c.model})` : ''}
`);
}

/** `/role NAME key=value …`: the name, and the values of its placeholders ("key=two words" quoted, as a shell reads it). */
function roleArguments(arg: string): { name: string; values: Record<string, string> } {
  const [name = '', ...rest] = arg.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) ?? [];
  const values: Record<string, string> = {};
  for (const word of rest) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw usage(`"${word}" is not key=value: /role ${name} key=value gives the role's $key its value`);
    values[word.slice(0, eq)] = word.slice(eq + 1).replace(/"([^"]*)"|'([^']*)'/g, (_, a: string | undefined, b: string | undefined) => a ?? b ?? '');
  }
  return { name, values };
}

/**
 * Where a turn's answer is written: on a terminal Markdown rendered as it streams, as chat's (not with --raw); a key
 * in use that the model says back hidden, split across pieces too. A whole answer ends its line; a failed one only
 * if some of it was shown.
 */
export async function answerWriter(io: IO, opts: ChatOptions): Promise<{ write(piece: string): void; end(whole: boolean): void }> {
  const { rendersMarkdown } = await import('../../io/output.js');
  const md = rendersMarkdown(io, opts) ? (await import('../../markdown/index.js')).terminalMarkdown(io) : undefined;
  const hide = new TextRedactor(io.secrets, io.marked);
  let shown = false;
  const show = (text: string) => text && io.out(md ? md.push(text) : text);
  return {
    write: (piece) => {
      shown ||= piece !== '';
      show(hide.push(piece));
    },
    end: (whole) => {
      show(hide.end());
      if (md) io.out(md.end() || (whole ? '\n' : ''));
      else if (whole || shown) io.out('\n');
    },
  };
}

/**
 * A turn's failure, said as a one-shot chat's is (which key, which --timeout, how many retries), and
 * that an answer cut short is not kept: the next message goes without it.
 */
export function sayTurnFailure(io: IO, err: unknown, connected: Connected, flags: GlobalFlags, answered: boolean, report: (err: unknown, io: IO) => unknown): void {
  addKeyHint(err, connected.settings);
  addTimeoutHint(err, flags, connected.client.core.timeoutMs);
  addRetryHint(err);
  report(err, io);
  if (answered) io.err('(the answer was cut short: it is not kept, and the next message goes without it)\n');
}
