/** `responses --tools/--mcp`: function calls run as chat runs them, their outputs sent back as `function_call_output` items. */
import type { ResponsesRequest, ResponsesResult } from '../../../client/resources/responses.js';
import { functionCalls } from '../../answers/answer-extras.js';
import type { IO } from '../../io/io.js';
import { passedImages, runRound, type ToolLoop } from '../../tools/tool-loop.js';
import { chatCalls } from '../../tools/tool-runner.js';

type Item = Record<string, unknown>;

/** Asks again with each round's calls and outputs in the input, until the model answers without calls. */
export async function responsesToolLoop(io: IO, loop: ToolLoop, req: ResponsesRequest, first: ResponsesResult | undefined, ask: (req: ResponsesRequest) => Promise<ResponsesResult | undefined>): Promise<ResponsesResult | undefined> {
  let final = first;
  const input: Item[] = typeof req.input === 'string' ? [{ role: 'user', content: req.input }] : [...(req.input as Item[])];
  for (let round = 1; final && functionCalls(final).length; round++) {
    const calls = chatCalls(functionCalls(final));
    const outcomes = await runRound(io, loop, calls, round);
    const images = await passedImages(io, loop, outcomes);
    for (const item of (final.output as Item[] | undefined) ?? []) if (item?.type === 'function_call') input.push(item);
    calls.forEach((c, i) => input.push({ type: 'function_call_output', call_id: c.id, output: outcomes[i]!.text }));
    if (images.length) input.push({ role: 'user', content: images.map((im) => ({ type: 'input_image', image_url: `data:${im.mimeType};base64,${im.data}` })) });
    final = await ask({ ...req, input: input as ResponsesRequest['input'] });
  }
  return final;
}
