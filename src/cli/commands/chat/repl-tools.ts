/** `chat -i --tools/--mcp`: each turn runs the model's tool calls as chat does; `/tools` lists them. */
import type { ChatCompletionRequest, ChatMessage } from '../../../client/types.js';
import type { RouterClient } from '../../../client/index.js';
import { deltaText } from '../../../client/resources/chat.js';
import { MessageAssembler, type AssembledMessage } from '../../answers/answer-extras.js';
import type { IO } from '../../io/io.js';
import { waitingFor, waitingSpinner } from '../../io/spinner.js';
import type { ToolSet } from '../../../kit/toolset.js';
import { toolLoop, type ToolLoop } from '../../tools/tool-loop.js';
import { approved, type ShownCall } from '../../tools/tool-runner.js';
import { cut } from '../../io/described.js';
import { visible } from '../../../internal/visible.js';

export interface TurnAnswer {
  text: string;
  /** The calls and results of this turn, to go in the history before the answer. */
  added: ChatMessage[];
}

/**
 * One turn with tools: the answer streamed (`print` gets each piece of text), the calls it asks for
 * run, and asked again until it answers in text (its reasoning to `reasoning`, piece by piece). `round` is told each request's usage, id and the model
 * that answered, `answering` each request's id as its answer begins; `next`
 * checks each further round before it is sent (the spend guard).
 */
export async function toolTurn(io: IO, client: RouterClient, req: ChatCompletionRequest, loop: ToolLoop, print: (piece: string) => void, round: (usage: Record<string, unknown> | undefined, id: string | undefined, model: string | undefined) => void, next?: (body: ChatCompletionRequest) => Promise<void>, answering?: (id: string) => void, reasoning?: (text: string) => void): Promise<TurnAnswer> {
  const messages = [...req.messages];
  let asked = 0;
  const ask = async (msgs: ChatMessage[]): Promise<{ message: AssembledMessage; text: string }> => {
    const assembler = new MessageAssembler();
    let text = '';
    let usage: Record<string, unknown> | undefined;
    let id: string | undefined;
    let model: string | undefined;
    const body = { ...req, messages: msgs };
    // The turn's first request was checked before it began, its spinner started with it (repl.ts); each
    // further round (a longer prompt) is checked by `next`, and waits with a spinner of its own.
    const later = asked++ > 0;
    if (later) await next?.(body);
    const stopWaiting = later ? waitingSpinner(io, waitingFor(body.model ?? body.models?.[0])) : undefined;
    try {
      for await (const chunk of await client.chat.streamText(body, { signal: loop.signal })) {
        reasoning?.(assembler.add(chunk));
        if (chunk.usage) usage = chunk.usage as unknown as Record<string, unknown>;
        if (chunk.id && !id) answering?.((id = chunk.id));
        if (chunk.model) model ??= chunk.model;
        const piece = deltaText(chunk);
        text += piece;
        if (piece) print(piece);
      }
    } finally {
      stopWaiting?.();
    }
    round(usage, id, model);
    return { message: assembler.message(), text };
  };
  const answer = await toolLoop(io, loop, messages, await ask(messages), ask);
  return { text: answer.text, added: messages.slice(req.messages.length) };
}

/**
 * --approve in chat -i: the question is asked between the keys the turn swallows (paused for it), and
 * Ctrl-C there stops the answer as it does while the answer streams.
 */
export function replApprover(io: IO, signal: AbortSignal, keys: { pause(): void; resume(): void }, stop: () => void) {
  return async (call: ShownCall): Promise<boolean> => {
    keys.pause();
    try {
      return await approved(io, call, signal);
    } catch (err) {
      if ((err as { name?: string })?.name === 'ExitPromptError') stop();
      throw err;
    } finally {
      keys.resume();
    }
  };
}

/** `/tools`: each tool the model may call, with where it comes from. */
export function listTools(io: IO, set: ToolSet | undefined): void {
  if (!set) return void io.err('no tools: start chat -i with --tools FILE or --mcp COMMAND|URL\n');
  const lines = [...set.tools.values()].map((t) => `${t.name}  (${t.source ?? 'code'})${t.description ? `  ${cut(visible(io.redact(t.description.split('\n')[0]!)), 80)}` : ''}`);
  lines.push(...set.declared.map((d) => `${d.name}  (no command: the model's calls end the turn)`));
  io.err(`${lines.join('\n')}\n`);
}
