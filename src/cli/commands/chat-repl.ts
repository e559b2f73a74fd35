import type { RunContext } from '../run.js';
import type { ChatOptions } from './chat.js';
import { usage } from '../exit-codes.js';

export async function runRepl(_ctx: RunContext<ChatOptions>): Promise<void> {
  throw usage('interactive mode is not available yet');
}
