/** What the REPL's slash commands check and write: /model against the model list, /save as Markdown, /help. */
import type { ChatMessage } from '../../../client/types.js';
import type { Model } from '../../../client/resources/models.js';
import type { RouterClient } from '../../../client/index.js';
import type { Attachment } from '../../answers/attach.js';
import type { IO } from '../../io/io.js';
import { usage } from '../../exit-codes.js';
import { didYouMean } from '../../../internal/did-you-mean.js';
import { CostCapExceeded } from '../../../kit/spend/errors.js';
import { counted } from '../../../internal/counted.js';
import { cutText } from '../../../internal/first-words.js';
import { resolveModel } from '../../../kit/model-aliases.js';
import { termAndDescription, wrapped } from '../../io/narrow-help.js';
import { cliErrorOf } from '../../kit-words.js';

/** /help: one command a line (see replHelp), each within 80 columns. */
export const REPL_COMMANDS = [
  '/model ID         switch the model (checked against router models)',
  '/system TEXT      set the system message (none: clear it)',
  '/role NAME [k=v]  take a role (router roles list); k=v fills its $k',
  '/attach PATH|URL  add a file to the next message',
  '/fragment SOURCE  put a file, URL or kept fragment before the next message',
  '/edit             write the message in $VISUAL or $EDITOR',
  '/save FILE        save the conversation to a new FILE (.md: Markdown, else JSON)',
  '/save! FILE       save it over a file that exists',
  '/clear            clear the conversation and the pending attachments',
  '/tools            list the tools of --tools and --mcp',
  '/help             this list',
  '/exit             end the session (Ctrl-D too)',
  'Alt-Enter, Ctrl-J or a line ending in \\ goes on in the next line;',
  'a paste is one message; Enter sends it.',
  'Up-arrow recalls earlier lines, of earlier sessions too.',
  'Ctrl-C stops an answer (the exchange is dropped) or clears the line;',
  'on an empty line it exits (130).',
].join('\n');

/** Said when the session starts, wrapped to the terminal. */
export const replStart = (model: string | undefined, width: number): string =>
  `${wrapped(`router chat${model ? ` with ${model}` : ''}. Alt-Enter or Ctrl-J: a new line; /help lists the commands; /exit or Ctrl-D ends`, width)}\n`;

/** /help as the terminal shows it: each command's description beside it, wrapped, or under it where it is narrow. */
export function replHelp(width: number): string {
  return REPL_COMMANDS.split('\n')
    .map((line) => (line.startsWith('/') ? termAndDescription(line.slice(0, 18), 18, line.slice(18), width, 20) : wrapped(line, width)))
    .join('\n');
}

/** The commands of /help that take no argument: one given is refused rather than ignored. */
export const NO_ARGUMENT = new Set(['/edit', '/clear', '/tools', '/help', '/exit', '/quit']);

/** A slash command that is none of /help's, with the one it most likely meant. */
export function unknownReplCommand(cmd: string): string {
  const names = [...REPL_COMMANDS.matchAll(/^\/[a-z]+/gm)].map((m) => m[0]);
  return `unknown command ${cmd}${didYouMean(cmd, names)}; /help lists the commands\n`;
}

/** The model list, as `router models` keeps it; undefined when it cannot be read (briefly). */
export async function modelList(client: RouterClient, env: NodeJS.ProcessEnv, apiRoot: string | undefined): Promise<Model[] | undefined> {
  const { modelCatalog } = await import('../../service/model-catalog.js');
  const { DEFAULT_API_ROOT } = await import('../../../client/core.js');
  return modelCatalog(client, { env, apiRoot: apiRoot ?? DEFAULT_API_ROOT, signal: AbortSignal.timeout(3000) }).catch(() => undefined);
}

/** /model ID: refused (the model in use stays) when the list is known and does not hold it. */
export async function checkReplModel(id: string, models: Model[] | undefined): Promise<void> {
  if (!models || models.some((m) => m.id === id)) return;
  const { nearestModel } = await import('../../service/model-hint.js');
  const near = nearestModel(id, models.map((m) => m.id));
  throw usage(`/model: ${cutText(id, 80)} is not in the model list (${near ? `did you mean ${near}? ` : ''}the list: router models); the model stays`);
}

/** The pending attachments a model cannot take (by its input modalities), named with the way out. */
export function pendingNotTaken(io: IO, model: Model | undefined, attached: Attachment[], wayOut = 'or switch back with /model'): void {
  const listed = (model?.architecture as { input_modalities?: unknown } | undefined)?.input_modalities;
  const takes = Array.isArray(listed) ? listed.filter((m): m is string => typeof m === 'string') : undefined;
  if (!model || !takes) return;
  const refused = attached.filter((a) => !takes.includes(a.kind));
  if (!refused.length) return;
  const names = refused.map((a) => `${a.filename} (${a.kind})`).join(', ');
  io.err(`note: ${model.id} takes ${takes.join(', ')}: the pending ${refused.length === 1 ? 'attachment' : 'attachments'} ${names} would be refused; /clear drops ${refused.length === 1 ? 'it' : 'them'}, ${wayOut}\n`);
}

/**
 * The conversation as Markdown: a heading per message, its text as it was, attachments as the conversation keeps them
 * (by name, type and size); titled with the models that answered in it (the one in use when none has yet).
 */
export function conversationMarkdown(models: (string | undefined)[], history: ChatMessage[]): string {
  const part = (p: unknown) => {
    const { type, text } = (p ?? {}) as { type?: unknown; text?: unknown };
    return typeof text === 'string' ? text : `[${String(type)}]`;
  };
  const text = (m: ChatMessage) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map(part).join('\n'));
  const parts = history.map((m) => `## ${m.role}\n\n${text(m).trim()}\n`);
  const named = models.filter((m) => m !== undefined);
  return `# Conversation${named.length ? ` with ${named.join(', ')}` : ''}\n\n${parts.join('\n')}`;
}

/**
 * A turn refused by its bound where the conversation so far is part of it (every turn sends it all, so
 * the bound grows as the conversation does): the ways out, /clear first.
 */
export function boundWayOut(err: unknown, history: ChatMessage[]): string | undefined {
  const earlier = history.filter((m) => m.role !== 'system').length;
  if (!(err instanceof CostCapExceeded) || earlier === 0) return undefined;
  return `the ${counted(earlier, 'earlier message')} of this conversation go with every turn and count in its bound: /clear starts afresh (/save FILE first keeps them), /model can take a cheaper model, or chat -i --ignore-budget leaves the budget out\n`;
}

/** A model named in chat -i (/model, a role's): an alias's model id; anything else as it is, for the checks after. */
export function aliasedModel(value: string, env: NodeJS.ProcessEnv): string {
  if (!value || value.includes('/')) return value;
  try {
    return resolveModel(value, env) ?? value;
  } catch {
    return value;
  }
}

/** An error of a slash command said as the REPL's others are, the command first: "error: /save: cannot write …". */
export const namedBy = (cmd: string) => (caught: unknown): never => {
  const err = cliErrorOf(caught) ?? caught;
  if (err instanceof Error && !err.message.startsWith(cmd)) err.message = `${cmd}: ${err.message}`;
  throw err;
};
