/**
 * Conversations of `router chat`, kept by src/kit's `ConversationStore` in the state folder
 * ($XDG_STATE_HOME/router/conversations); its errors are worded for the CLI in cli/kit-words.ts.
 */
import { join } from 'node:path';
import type { ChatMessage } from '../../client/types.js';
import { ConversationStore, newConversationRecord, type ConversationRecord, type ConversationSummary } from '../../kit/conversation-store.js';

export { checkConversationId, type ConversationSummary } from '../../kit/conversation-store.js';
export type Conversation = ConversationRecord;

const store = (env: NodeJS.ProcessEnv) => new ConversationStore({ env });

export const newConversation = (model: string | undefined, first: string): Conversation => newConversationRecord(model, first);
export const loadConversation = (env: NodeJS.ProcessEnv, id: string): Conversation => store(env).load(id);
/** The conversation `--continue` takes up: the last one saved, else the most recent (null: none). */
export const lastConversation = (env: NodeJS.ProcessEnv): Conversation | null => store(env).last();
export const saveConversation = (env: NodeJS.ProcessEnv, c: Conversation, basedOn: Conversation | undefined, turn: readonly ChatMessage[]): Conversation => store(env).save(c, basedOn, turn);
export const findConversations = (env: NodeJS.ProcessEnv, keep?: (c: Conversation) => boolean) => store(env).find(keep);
/** The file a conversation is kept in. */
export const conversationFile = (env: NodeJS.ProcessEnv, id: string): string => join(store(env).dir, `${id}.json`);
export const findConversationIds = (env: NodeJS.ProcessEnv): string[] => store(env).ids();
export const conversationSummaries = (env: NodeJS.ProcessEnv, ids: readonly string[]): Generator<ConversationSummary> => store(env).summaries(ids);
export const deleteConversation = (env: NodeJS.ProcessEnv, id: string): void => store(env).delete(id);

/** Runs a load or a delete; an id no conversation has gets the guess (`hint`, worded by cli/kit-words.ts). */
export async function withGuess<T>(env: NodeJS.ProcessEnv, id: string, fn: () => T, command: string): Promise<T> {
  try {
    return fn();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'not_found') Object.assign(err as object, { hint: await nearConversation(env, id, command) });
    throw err;
  }
}

/**
 * " (did you mean ID?)" for an id no conversation has, when a kept one is close (by the files' names only);
 * one that starts with "-" is given after -- where it is an argument of `command` (`conversations show`).
 */
export async function nearConversation(env: NodeJS.ProcessEnv, id: string, command?: string): Promise<string> {
  const near = (await import('../../internal/did-you-mean.js')).closest(id, store(env).ids());
  if (!near || near === id) return '';
  return command && near.startsWith('-') ? ` (did you mean ${near}? as in router ${command} -- ${near})` : ` (did you mean ${near}?)`;
}
