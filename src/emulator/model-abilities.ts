import type { ModelSpec } from './models.js';

const CHAT_PARAMETERS = ['max_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'repetition_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'response_format', 'structured_outputs'];

/** What GET /v1/models says a model takes and gives: its modalities and the parameters it honours. */
export function abilitiesOf(m: ModelSpec) {
  const chat = m.kind === 'chat';
  const input = chat ? [...new Set(['text', ...(m.input ?? [])])] : m.kind === 'speech' || m.kind === 'embedding' || m.kind === 'decision' ? ['text'] : [];
  const output = chat ? (m.output ?? ['text']) : m.kind === 'speech' ? ['audio'] : m.kind === 'embedding' ? ['embeddings'] : ['text'];
  const parameters = chat ? [...CHAT_PARAMETERS, ...(m.id === 'local/tools' ? ['tools', 'tool_choice', 'parallel_tool_calls'] : []), ...(m.id === 'local/thinker' ? ['reasoning', 'include_reasoning'] : [])] : [];
  return {
    architecture: { modality: `${input.join('+')}->${output.join('+')}`, input_modalities: input, output_modalities: output, tokenizer: 'local', instruct_type: null },
    supported_parameters: parameters,
  };
}
