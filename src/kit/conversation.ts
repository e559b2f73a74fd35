/**
 * A model and the conversations held with it, as simonw/llm's library has them: `model.prompt()`
 * for one exchange, `model.conversation()` for several, each prompt sent after the ones before; a
 * conversation given a `ConversationStore` is kept there after each turn (the CLI's `chat -c` takes it up).
 */
import type { RouterClient } from '../client/index.js';
import { ValidationError } from '../client/errors.js';
import { shownGiven } from '../internal/shape.js';
import type { ChatMessage } from '../client/types.js';
import { ConversationStore, newConversationRecord, type ConversationRecord } from './conversation-store.js';
import { ConversationError } from './errors.js';
import { FragmentStore } from './fragments.js';
import { dirname, join } from 'node:path';
import { promptTurn, runPrompt, type PromptOptions, type PromptResponse, type SchemaAnswer } from './prompt.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { resolveModel } from './model-aliases.js';

/** The names of ConversationOptions's members, checked against it both ways (a new option is a name here too). */
const CONVERSATION_OPTIONS = optionNames<ConversationOptions>()({ store: 1, id: 1, last: 1 });
const MODEL_OPTIONS = optionNames<ChatModelOptions>()({ env: 1 });

export interface ChatModelOptions {
  /** Where the aliases are read (`router aliases`' config folder: ROUTER_CONFIG_DIR, …); `process.env` if absent. */
  env?: NodeJS.ProcessEnv | undefined;
}

export interface ConversationOptions {
  /** Where the conversation is kept after each turn (none: held in memory only). */
  store?: ConversationStore | undefined;
  /** Its id: a kept one of that id is taken up, else a new one gets it. */
  id?: string | undefined;
  /** Take up the conversation kept last (a new one when there is none). */
  last?: boolean | undefined;
}

export class ChatModel {
  // Private (#): a program that logs its model (util.inspect, a logger's JSON) never prints its environment.
  readonly #env: NodeJS.ProcessEnv;

  constructor(
    readonly client: RouterClient,
    /** An `<author>/<slug>` model id. */
    readonly id: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.#env = env;
  }

  /** A prompt's options with its `model`, an alias `router aliases set` keeps, as the model id it names. */
  aliased(opts: PromptOptions | undefined): PromptOptions | undefined {
    const model = opts?.model === undefined ? undefined : resolveModel(opts.model, this.#env);
    return model === undefined || model === opts!.model ? opts : { ...opts, model };
  }

  /** One exchange: the prompt, the tool calls the model asks for run, the answer (with a schema written in the call, `json` typed by it). */
  prompt<const S extends Record<string, unknown>>(text: string, opts: PromptOptions & { schema: S }): Promise<SchemaAnswer<S>>;
  prompt(text: string, opts?: PromptOptions): Promise<PromptResponse>;
  prompt(text: string, opts?: PromptOptions): Promise<PromptResponse> {
    return runPrompt(this.client, this.id, [], text, this.aliased(opts));
  }

  /** A conversation with this model: new, or taken up from a store (`id`, `last`). */
  conversation(opts: ConversationOptions = {}): Conversation {
    checkOptions('conversation()', opts, CONVERSATION_OPTIONS);
    const { store } = opts;
    if ((opts.id !== undefined || opts.last) && !store) throw new TypeError('a conversation taken up by id or last needs a store');
    let record: ConversationRecord | undefined;
    if (opts.last) record = store!.last() ?? undefined;
    else if (opts.id !== undefined) {
      try {
        record = store!.load(opts.id);
      } catch (err) {
        if (!(err instanceof ConversationError && err.code === 'not_found')) throw err;
      }
    }
    return new Conversation(this, record, store, opts.id);
  }
}

/**
 * A model of the service by id (`chatModel(client, 'local/echo')`), or by an alias `router aliases set` keeps, as llm's
 * `get_model()` takes one (a name without a slash, never a model id: one the service would refuse).
 */
export function chatModel(client: RouterClient, id: string, opts: ChatModelOptions = {}): ChatModel {
  checkOptions('chatModel()', opts, MODEL_OPTIONS);
  if (typeof id !== 'string' || !id.trim()) throw new ValidationError(`chatModel() takes a model id or alias after the client, as chatModel(client, 'local/echo'), not ${id === '' ? 'an empty string' : typeof id === 'string' ? 'blanks' : shownGiven(id)}`);
  const env = opts.env ?? process.env;
  return new ChatModel(client, resolveModel(id, env) ?? id, env);
}

export class Conversation {
  private record: ConversationRecord | undefined;

  constructor(
    readonly model: ChatModel,
    record?: ConversationRecord,
    readonly store?: ConversationStore,
    private readonly newId?: string,
  ) {
    this.record = record;
  }

  /** Its id (a new one has it after its first turn, unless it was named). */
  get id(): string | undefined {
    return this.record?.id ?? this.newId;
  }

  /** The messages so far (attachments by reference). */
  get messages(): readonly ChatMessage[] {
    return this.record?.messages ?? [];
  }

  /** The conversation as it is kept (undefined before its first turn). */
  get kept(): ConversationRecord | undefined {
    return this.record;
  }

  /** The messages so far as sent: fragments a turn of `router chat -f` kept by hash, as their text (from the store's sibling `fragments`). */
  private sentMessages(): ChatMessage[] {
    if (!this.messages.some((m) => 'fragments' in m)) return [...this.messages];
    return new FragmentStore({ dir: join(dirname(this.store!.dir), 'fragments') }).expand(this.messages);
  }

  /**
   * The prompt after the messages so far; the turn is kept (in the store, when there is one) before
   * the answer is checked against a schema, so that an answer that does not follow it is kept too.
   */
  prompt<const S extends Record<string, unknown>>(text: string, opts: PromptOptions & { schema: S }): Promise<SchemaAnswer<S>>;
  prompt(text: string, opts?: PromptOptions): Promise<PromptResponse>;
  async prompt(text: string, given: PromptOptions = {}): Promise<PromptResponse> {
    const opts = this.model.aliased(given)!;
    const earlier = this.record;
    const { response, check } = await promptTurn(this.model.client, this.model.id, this.sentMessages(), text, opts);
    const model = opts.model ?? this.model.id;
    const base = earlier ?? newConversationRecord(model, text, this.newId);
    const system = opts.system === undefined ? [] : [{ role: 'system' as const, content: opts.system }];
    const history = opts.system === undefined ? base.messages : base.messages.filter((m) => m.role !== 'system');
    const next: ConversationRecord = { ...base, model, messages: [...system, ...history, ...response.messages], updated_at: new Date().toISOString() };
    // A turn the store cannot keep (a full disk) is held here still; the store's error is thrown.
    this.record = next;
    if (this.store) this.record = await this.store.saveAsync(next, earlier, [response.messages[0]!, response.messages.at(-1)!]);
    return check(response);
  }
}
