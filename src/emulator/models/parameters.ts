/** The request parameters a model list names (the OpenAPI's `Parameter` enum), and which a chat model honours. */
export const PARAMETER_NAMES = ['temperature', 'top_p', 'top_k', 'min_p', 'top_a', 'frequency_penalty', 'presence_penalty', 'repetition_penalty', 'max_tokens', 'max_completion_tokens', 'logit_bias', 'logprobs', 'top_logprobs', 'prediction', 'seed', 'response_format', 'structured_outputs', 'stop', 'tools', 'tool_choice', 'parallel_tool_calls', 'include_reasoning', 'reasoning', 'reasoning_effort', 'web_search_options', 'verbosity'];

/** What every fake chat model honours. */
export const CHAT_PARAMETERS = ['temperature', 'top_p', 'top_k', 'min_p', 'top_a', 'frequency_penalty', 'presence_penalty', 'repetition_penalty', 'max_tokens', 'max_completion_tokens', 'logit_bias', 'logprobs', 'top_logprobs', 'seed', 'response_format', 'structured_outputs', 'stop'];

export const TOOL_PARAMETERS = ['tools', 'tool_choice', 'parallel_tool_calls'];

/**
 * What a gateway's upstream chat model is listed as taking unless its providers file says otherwise
 * (`supported_parameters`): the gateway relays a request's members as sent, tools among them.
 */
export const UPSTREAM_CHAT_PARAMETERS = [...CHAT_PARAMETERS, ...TOOL_PARAMETERS];

/** Names in the model list's order, each once. */
export const inListOrder = (names: Iterable<string>) => {
  const given = new Set(names);
  return PARAMETER_NAMES.filter((p) => given.has(p));
};

/** A gateway's upstream model's parameters: what any provider serving it takes (each endpoint lists its own). */
export const takenByAny = (served: { parameters?: string[] }[]) => inListOrder(served.flatMap((m) => m.parameters ?? UPSTREAM_CHAT_PARAMETERS));
