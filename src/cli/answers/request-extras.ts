/** What chat and responses send and show beyond text, read and checked before anything is sent. */
import type { ChatMessage } from '../../client/types.js';
import { chatParts, readAttachments, responsesParts, type Attachment } from './attach.js';
import { recordedUserMessage } from '../../kit/messages.js';
import { describeAnnotation, type AssembledMessage } from './answer-extras.js';
import { usage } from '../exit-codes.js';
import { textFromArgs, type TextOptions } from '../io/input.js';
import type { IO } from '../io/io.js';
import { PROSE, visible } from '../../internal/visible.js';
import { TextRedactor } from '../../internal/redact-text.js';
import { checkImagesDir, showImages } from './save-images.js';
import { chatResponseFormat, loadSchema, printSchemaAnswer, responsesTextFormat, type AnswerSchema } from './schema-check.js';
import type { FlagValues } from '../flags/flags.js';
import type { ANSWER_FLAGS, TOOL_FLAGS } from '../flags/answer-flags.js';

type Body = Record<string, unknown>;
export type ExtraOpts = FlagValues<typeof ANSWER_FLAGS> & FlagValues<typeof TOOL_FLAGS> & { json?: boolean; stream?: boolean; responseFormat?: string; textFormat?: string };

export type Api = 'chat' | 'responses';
/** Reads `--tools FILE` (loadTools of cli/tools, handed in: the tools import answers, not the other way). */
export type ToolsReader<T> = (path: string | undefined, io: IO, api: Api) => Promise<T | undefined>;

export interface Extras<T = unknown> {
  attachments: Attachment[];
  schema?: AnswerSchema;
  tools?: T;
  plugins?: Body[];
}

/** `--plugin ID[,key=value…]`: values that read as JSON (numbers, true, false) are sent as such. */
export function pluginsFrom(list: string[] | undefined, web: boolean | undefined): Body[] | undefined {
  const plugins = (list ?? []).map((spec) => {
    const [id, ...pairs] = spec.split(',').map((s) => s.trim());
    if (!id || !/^[A-Za-z0-9_.:-]+$/.test(id)) throw usage(`--plugin ${spec}: give the plugin's id first, e.g. --plugin web,max_results=3`);
    const plugin: Body = { id };
    for (const pair of pairs) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw usage(`--plugin ${spec}: "${pair}" is not key=value`);
      const raw = pair.slice(eq + 1);
      plugin[pair.slice(0, eq)] = /^(-?\d+(\.\d+)?|true|false|null)$/.test(raw) ? JSON.parse(raw) : raw;
    }
    return plugin;
  });
  if (web && !plugins.some((p) => p.id === 'web')) plugins.push({ id: 'web' });
  return plugins.length ? plugins : undefined;
}

/** Reads and checks every extra (attachments, schema, tools, plugins, the images folder) before the prompt is sent. */
export async function prepareExtras<T>(opts: ExtraOpts, io: IO, api: Api, loadTools: ToolsReader<T>): Promise<Extras<T>> {
  const modalities = api === 'chat' ? ['text', 'image', 'audio'] : ['text', 'image'];
  for (const m of opts.modalities ?? []) if (!modalities.includes(m)) throw usage(`--modalities: "${m}" is not one of ${modalities.join(', ')}`);
  if (opts.approve && !io.canPrompt) throw usage('--approve asks on a terminal: run it on one (without --no-input), or leave --approve out');
  const fromStdin = [opts.attach?.includes('-') && '--attach -', opts.schema === '-' && '--schema -', opts.tools === '-' && '--tools -'].filter(Boolean);
  if (fromStdin.length > 1) throw usage(`stdin can be read once: give a file to all but one of ${fromStdin.join(', ')}`);
  checkImagesDir(opts.saveImages);
  const extract = opts.extract ? '--extract' : opts.extractLast ? '--extract-last' : undefined;
  if (extract && (opts.json || opts.schema !== undefined)) throw usage(`give one of ${extract} and ${opts.json ? '--json' : opts.schemaMulti !== undefined ? '--schema-multi' : '--schema'}`);
  if (opts.extract && opts.extractLast) throw usage('give one of --extract and --extract-last');
  const plugins = pluginsFrom(opts.plugin, opts.web);
  const schema = await loadSchema(opts.schema, io, opts.schemaMulti !== undefined);
  const tools = await loadTools(opts.tools, io, api);
  if (api === 'chat' && schema && (tools || opts.mcp?.length)) throw usage(`give one of --schema and ${tools ? '--tools' : '--mcp'}`);
  if (schema && (opts.responseFormat || opts.textFormat)) throw usage(`give one of --schema and ${opts.responseFormat ? '--response-format' : '--text-format'}`);
  const attachments = await readAttachments(opts.attach, io);
  return { attachments, schema, tools, plugins };
}

/** The prompt: from the arguments and stdin, unless stdin is an attachment (then the arguments alone, or none). */
export async function promptWith(args: string[], io: IO, extras: Extras, example: string, more: Pick<TextOptions, 'onTerminal' | 'binary'> = {}): Promise<string> {
  const stdinAttached = extras.attachments.some((a) => a.source === '-');
  if (stdinAttached && args.includes('-')) throw usage('stdin is attached (--attach -): it cannot be the prompt too');
  if (extras.attachments.length && args.length === 0 && (stdinAttached || io.stdinTTY)) return '';
  return textFromArgs(args, io, { mergeStdin: !stdinAttached, example, ...more });
}

/** The user message's content: the prompt, then a part per attachment. */
export function userContent(prompt: string, extras: Extras, api: 'chat' | 'responses'): string | Body[] {
  if (!extras.attachments.length) return prompt;
  const text = prompt ? [{ type: api === 'chat' ? 'text' : 'input_text', text: prompt }] : [];
  return [...text, ...(api === 'chat' ? chatParts : responsesParts)(extras.attachments)];
}

/** The user message as a conversation keeps it: the attachments by reference (path and hash), not their bytes. */
export const recordedUser = (prompt: string, extras: Extras): ChatMessage => recordedUserMessage(prompt, extras.attachments);

/** Adds the extras to a request body: the schema's format, plugins, output modalities (the tools: openTools). */
export function applyExtras(req: Body, opts: ExtraOpts, extras: Extras, api: 'chat' | 'responses'): void {
  if (extras.schema) {
    if (api === 'chat') req.response_format = chatResponseFormat(extras.schema);
    else req.text = { ...(req.text as Body | undefined), format: responsesTextFormat(extras.schema) };
  }
  if (extras.plugins) req.plugins = extras.plugins;
  if (opts.modalities) req.modalities = opts.modalities;
}

/** Reasoning, on stderr with --show-reasoning (dimmed on a terminal in colour, control characters escaped); never on stdout. */
export function reasoningPrinter(io: IO, opts: ExtraOpts) {
  let started = false;
  let last = '';
  // A key in use that the reasoning says back (of a prompt that held it) is hidden, as the answer's is.
  const hide = new TextRedactor(io.secrets, io.marked);
  const show = (text: string) => {
    if (!text) return;
    if (!started && io.errColor) io.err('\x1b[2m');
    started = true;
    last = text;
    // On a terminal the model's control characters are shown escaped, as its answer's are (a CR that ends a
    // line, or this piece, is dropped: the piece after may start with its LF).
    io.err(io.stderrTTY ? visible(text.replace(/\r(\n|$)/g, '$1'), PROSE) : text);
  };
  return {
    write(text: string) {
      if (!opts.showReasoning || opts.json || !text) return;
      show(hide.push(text));
    },
    end() {
      show(hide.end());
      if (started) io.err(`${io.errColor ? '\x1b[22m' : ''}${last.endsWith('\n') ? '' : '\n'}`);
      started = false;
    },
  };
}

/** After the answer: images saved or counted, citations listed (on a terminal), the schema's check (exit 10). */
export function finishAnswer(io: IO, opts: ExtraOpts, extras: Extras, message: AssembledMessage): void {
  // With --json the images are in the output; they are written only when asked.
  if (!opts.json || opts.saveImages !== undefined) showImages(io, message.images, opts.saveImages);
  // Titles come from web pages: their control characters are shown escaped.
  if (!opts.json) message.annotations?.forEach((a, i) => io.info(`[${i + 1}] ${visible(describeAnnotation(a))}`));
  if (extras.schema) printSchemaAnswer(io, extras.schema, message.content ?? '', !!opts.json);
}
