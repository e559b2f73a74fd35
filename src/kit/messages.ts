/** The messages of a prompt: the user's as sent and as kept, a system message put in, the usage of rounds summed. */
import type { ChatMessage, ChatUsage } from '../client/types.js';
import { attachmentReference, chatParts, type Attachment } from './attachments.js';
import { roundCost } from '../internal/round-cost.js';

/** The user message as sent: the prompt, then a part per attachment. */
export function userMessage(prompt: string, attachments: Attachment[]): ChatMessage {
  if (!attachments.length) return { role: 'user', content: prompt };
  return { role: 'user', content: [...(prompt ? [{ type: 'text', text: prompt }] : []), ...chatParts(attachments)] };
}

/** The user message as a conversation keeps it: the attachments by reference (name and hash), not their bytes. */
export function recordedUserMessage(prompt: string, attachments: Attachment[]): ChatMessage {
  if (!attachments.length) return { role: 'user', content: prompt };
  return { role: 'user', content: [prompt, ...attachments.map(attachmentReference)].filter(Boolean).join('\n') };
}

/** Two usages summed (the rounds of a tool loop); either undefined: the other. */
export function addUsage(sum: ChatUsage | undefined, u: ChatUsage | undefined): ChatUsage | undefined {
  if (!sum || !u) return sum ?? u;
  const cost = sum.cost === undefined && u.cost === undefined ? undefined : roundCost((sum.cost ?? 0) + (u.cost ?? 0));
  return { prompt_tokens: sum.prompt_tokens + u.prompt_tokens, completion_tokens: sum.completion_tokens + u.completion_tokens, total_tokens: sum.total_tokens + u.total_tokens, ...(cost === undefined ? {} : { cost }) };
}

/** The messages with `system` as their system message (replacing one there was); undefined: as they are. */
export function withSystem(history: ChatMessage[], system: string | undefined): ChatMessage[] {
  if (system === undefined) return [...history];
  return [{ role: 'system', content: system }, ...history.filter((m) => m.role !== 'system')];
}
