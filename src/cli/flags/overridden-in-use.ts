import type { Command } from 'commander';
import type { Settings } from '../../config/settings.js';

const EMBEDDING_COMMANDS = ['embed', 'embed-multi', 'similar'];

/**
 * The settings whose environment value goes before the profile's that this command reads: not one a
 * flag typed here replaces (--model, --voice, the conversation's model), nor one it never takes (a
 * voice, a speech model, outside speak; an
 * embedding model outside embed, embed-multi and similar; the chat model in those). Undefined when none is left.
 */
export function overriddenInUse(overridden: Settings['overridden'], cmd: Command, commandModel: boolean): Settings['overridden'] {
  const typed = (flag: string) => cmd.getOptionValueSource(flag) === 'cli';
  const speaks = cmd.options.some((o) => o.long === '--voice');
  // These read embed_model (and never model): no other command reads it.
  const embeds = EMBEDDING_COMMANDS.includes(cmd.name());
  const replaced: Record<string, boolean> = {
    model: commandModel || typed('model') || embeds,
    speech_model: !speaks || typed('model'),
    embed_model: !embeds || typed('model'),
    voice: !speaks || typed('voice'),
  };
  const left = overridden?.filter((o) => !replaced[o.field]);
  return left?.length ? left : undefined;
}
