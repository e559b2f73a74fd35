/**
 * Chat's tool loop: the model's calls run a round at a time, their results (and images) sent back
 * in the messages, until it answers in text. Who runs a round (and says what) is the caller's:
 * `runPrompt` for programs, the CLI's loop with its lines on stderr.
 */
import type { AssembledMessage } from '../client/message-assembler.js';
import type { ChatMessage } from '../client/types.js';
import type { CallOutcome, ToolCallRequest } from './tool-calls.js';
import type { ToolImage } from './tool.js';

export interface ToolRounds {
  /** Runs one round's calls (rounds count from 1) and gives what came of each, in order; throw to end the loop. */
  run(calls: ToolCallRequest[], round: number): Promise<CallOutcome[]>;
  /** The images of a round's results that go on to the model (default: none). */
  images?(outcomes: CallOutcome[]): Promise<ToolImage[]>;
}

/** Images from tool results, as a user message after them (a tool message of chat carries text only). */
function imagesMessage(images: ToolImage[]): ChatMessage | undefined {
  if (!images.length) return undefined;
  const parts = images.map((i) => ({ type: 'image_url', image_url: { url: `data:${i.mimeType};base64,${i.data}` } }));
  return { role: 'user', content: [{ type: 'text', text: 'The images the tools answered with:' }, ...parts] };
}

/** Runs the calls of `first` and asks again with `messages` (the rounds added to them) until an answer has no calls. */
export async function chatToolLoop<A extends { message: AssembledMessage }>(messages: ChatMessage[], first: A, ask: (messages: ChatMessage[]) => Promise<A>, rounds: ToolRounds): Promise<A> {
  let answer = first;
  for (let round = 1; answer.message.tool_calls?.length; round++) {
    const calls = answer.message.tool_calls.map(({ index: _index, ...c }) => c);
    const outcomes = await rounds.run(calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })), round);
    const images = imagesMessage((await rounds.images?.(outcomes)) ?? []);
    messages.push({ role: 'assistant', content: answer.message.content, tool_calls: calls });
    calls.forEach((call, i) => messages.push({ role: 'tool', tool_call_id: call.id, content: outcomes[i]!.text }));
    if (images) messages.push(images);
    answer = await ask(messages);
  }
  return answer;
}
