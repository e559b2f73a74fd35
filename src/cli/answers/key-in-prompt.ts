import type { IO } from '../io/io.js';

/**
 * Says on stderr, even piped, when a prompt holds a key router knows (the run's, another profile's, one kept in the
 * keychain, by its mark): it is sent as typed, and kept as typed in the conversation (which `-c` sends again) and in the
 * log, whose commands print it as `****` (docs/keys.md). Call it after connect(), which gives `io` every key known.
 */
export function sayKeyInPrompt(io: IO, prompt: string): void {
  io.marked.learn(prompt);
  if (!io.secrets.some((key) => prompt.includes(key))) return;
  io.note('warning: the prompt holds a key router knows (****): it is sent to the model as typed, and kept so in the conversation (router chat -c sends it again) and the log; router conversations delete ID removes it');
}
