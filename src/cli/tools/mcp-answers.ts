/**
 * What router answers when an MCP server asks (src/kit/mcp-client-requests.ts): the roots of
 * `--mcp-root`; a sampling request sent to the command's model with `--mcp-sampling` (asked on a
 * terminal without it, refused in a pipe), held to the command's spend and said on stderr; an
 * elicitation's form asked on a terminal, declined in a pipe with a line saying so.
 */
import { firstWholeWords } from '../../internal/key-safe-cut.js';
import type { ChatCompletion, ChatCompletionRequest } from '../../client/types.js';
import { McpRequestRefused, type McpClientAnswers, type ElicitationRequest, type ElicitationResult } from '../../kit/mcp-client-requests.js';
import type { IO } from '../io/io.js';
import { plainHttpWarning } from '../io/plain-http.js';
import { statSync } from 'node:fs';
import { ask } from '../io/ask.js';
import { usage } from '../exit-codes.js';
import { visible } from '../../internal/visible.js';
import { counted } from '../../internal/counted.js';

/** How the command sends a sampling request: set once its spend guard is made (before that, requests are refused). */
export interface SamplingSend {
  send?: (req: ChatCompletionRequest, signal: AbortSignal) => Promise<ChatCompletion>;
  /** The model that answers (the command's). */
  model?: string;
}

export interface AnswerPolicy {
  /** --mcp-root: the folders offered as roots (none: roots are not offered). */
  roots?: string[];
  /** --mcp-sampling: answer sampling requests without asking. */
  sampling?: boolean;
  /** Why no question is asked nor sampling request answered even on a terminal (chat -i: its line editor holds the terminal). */
  cannotAsk?: string;
}

/** A server's words, cut at a word's end (key-safe-cut.ts): a cut inside a key would leave a piece that hiding no longer knows. */
const words = (text: string, n = 80) => visible(text.length > n ? `${firstWholeWords(text, n)}…` : text);

/** The kit's answers for the CLI's policy; `sampling.send` is filled in later by the command. */
export function mcpAnswers(io: IO, policy: AnswerPolicy, sampling: SamplingSend): McpClientAnswers {
  for (const dir of policy.roots ?? []) if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw usage(`--mcp-root ${visible(dir)}: not a folder`);
  const refuse = (server: string, what: string, why: string): never => {
    io.note(`warning: MCP server ${server} asked for ${what}: refused (${why})`);
    throw new McpRequestRefused(`router refused: ${why}`);
  };
  return {
    ...(policy.roots?.length ? { roots: policy.roots } : {}),
    onPlainHttp: ({ host, inUrl }) => plainHttpWarning(io, inUrl ? `the credentials in the URL of MCP server ${host} (${inUrl.join(', ')}) go` : `the user and password of MCP server ${host} go`),
    sample: async (params, server, signal) => {
      const last = params.messages.at(-1)?.content;
      const text = (Array.isArray(last) ? last : [last]).map((b) => (b && 'text' in b ? String(b.text) : '')).join(' ');
      if (policy.cannotAsk) refuse(server, "a model's answer (sampling)", policy.cannotAsk);
      if (!policy.sampling) {
        if (!io.canPrompt) refuse(server, "a model's answer (sampling)", '--mcp-sampling allows it; a pipe cannot ask');
        const { confirm } = await import('@inquirer/prompts');
        if (!(await ask(io, confirm, { message: `MCP server ${server} asks the model (${counted(params.maxTokens, 'token')} at most): "${words(text)}". Send it?`, default: false }))) refuse(server, "a model's answer (sampling)", 'the user declined');
      }
      if (!sampling.send || !sampling.model) return refuse(server, "a model's answer (sampling)", 'the command has no model to ask yet');
      const { samplingChatRequest, samplingResult } = await import('../../kit/mcp-sampling.js');
      const req = samplingChatRequest(params, sampling.model);
      try {
        const completion = await sampling.send(req, signal);
        io.info(`sampling for ${server}: ${words(text, 60)} -> ${completion.model || sampling.model}${completion.usage ? `, ${counted(completion.usage.completion_tokens, 'token')}` : ''}`);
        return samplingResult(completion, sampling.model);
      } catch (err) {
        if (signal.aborted) throw err;
        return refuse(server, "a model's answer (sampling)", err instanceof Error ? err.message : String(err));
      }
    },
    elicit: async (req, server) => {
      if (policy.cannotAsk || !io.canPrompt) {
        io.note(`note: MCP server ${server} asked for input ("${words(req.message)}"): declined (${policy.cannotAsk ?? 'no terminal to ask on'})`);
        return { action: 'decline' };
      }
      return askForm(io, server, req);
    },
  };
}

type Field = { type?: string; title?: string; description?: string; default?: unknown; enum?: string[]; oneOf?: { const: string; title?: string }[]; items?: { enum?: string[]; anyOf?: { const: string; title?: string }[] }; minimum?: number; maximum?: number };

/** The form, a question a field (its title and description), on the terminal; Ctrl-C at a question ends the command as anywhere. */
async function askForm(io: IO, server: string, req: ElicitationRequest): Promise<ElicitationResult> {
  const p = await import('@inquirer/prompts');
  io.info(`MCP server ${server} asks: ${visible(req.message)}`);
  const content: Record<string, string | number | boolean | string[]> = {};
  const required = new Set(req.requestedSchema.required ?? []);
  for (const [key, f] of Object.entries(req.requestedSchema.properties) as [string, Field][]) {
    const message = visible(`${f.title ?? key}${f.description ? ` (${f.description})` : ''}${required.has(key) ? '' : ' [optional]'}`);
    const choices = f.enum?.map((v) => ({ value: v, name: v })) ?? f.oneOf?.map((o) => ({ value: o.const, name: o.title ?? o.const }));
    const many = f.items?.enum?.map((v) => ({ value: v, name: v })) ?? f.items?.anyOf?.map((o) => ({ value: o.const, name: o.title ?? o.const }));
    let value: string | number | boolean | string[] | undefined;
    if (f.type === 'boolean') value = await ask(io, p.confirm, { message, default: f.default === true });
    else if (choices) value = await ask(io, p.select<string>, { message, choices, ...(typeof f.default === 'string' ? { default: f.default } : {}) });
    else if (f.type === 'array' && many) value = await ask(io, p.checkbox<string>, { message, choices: many.map((c) => ({ ...c, checked: Array.isArray(f.default) && f.default.includes(c.value) })) });
    else if (f.type === 'number' || f.type === 'integer') value = await ask(io, p.number, { message, required: required.has(key), step: f.type === 'integer' ? 1 : ('any' as const), ...(f.minimum === undefined ? {} : { min: f.minimum }), ...(f.maximum === undefined ? {} : { max: f.maximum }), ...(typeof f.default === 'number' ? { default: f.default } : {}) });
    else value = (await ask(io, p.input, { message, required: required.has(key), ...(typeof f.default === 'string' ? { default: f.default } : {}) })) || undefined;
    if (value !== undefined) content[key] = value;
  }
  return { action: 'accept', content };
}
