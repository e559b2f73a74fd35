import { createInterface } from 'node:readline/promises';
import type { ChatMessage } from '../../client/types.js';
import type { RunContext } from '../run.js';
import { buildChatRequest, type ChatOptions } from './chat.js';
import { usage } from '../exit-codes.js';

const HELP = 'commands: /exit, /model ID, /system TEXT, /save FILE, /clear, /help; end a line with \\ to continue it';

/**
 * `router chat -i`: a conversation that keeps its history, streaming each answer.
 * Needs a terminal on stdin: it never prompts otherwise.
 */
export async function runRepl(ctx: RunContext<ChatOptions>): Promise<void> {
  const { io, opts, flags, signal } = ctx;
  if (!io.stdinTTY) throw usage('--interactive needs a terminal on stdin; pipe the prompt instead (echo hi | router chat)');
  const { connect } = await import('../context.js');
  const { client, settings } = await connect(io, flags, { model: opts.model });
  let model = settings.model;
  const history: ChatMessage[] = [];
  if (opts.system) history.push({ role: 'system', content: opts.system });
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  process.stderr.write(`router chat${model ? ` with ${model}` : ''}. ${HELP}\n`);
  try {
    for (;;) {
      let line: string;
      try {
        line = await rl.question('> ');
        while (line.endsWith('\\')) line = `${line.slice(0, -1)}\n${await rl.question('. ')}`;
      } catch {
        break; // Ctrl-D or Ctrl-C at the prompt
      }
      const text = line.trim();
      if (!text) continue;
      if (text.startsWith('/')) {
        const [cmd, ...rest] = text.split(/\s+/);
        const arg = rest.join(' ');
        if (cmd === '/exit' || cmd === '/quit') break;
        if (cmd === '/help') process.stderr.write(`${HELP}\n`);
        else if (cmd === '/model') {
          if (!/^[^/\s]+\/[^/\s]+$/.test(arg)) process.stderr.write('usage: /model <author>/<slug>\n');
          else process.stderr.write(`model: ${(model = arg)}\n`);
        } else if (cmd === '/system') {
          const at = history.findIndex((m) => m.role === 'system');
          if (at >= 0) history.splice(at, 1);
          if (arg) history.unshift({ role: 'system', content: arg });
          process.stderr.write(arg ? 'system message set\n' : 'system message cleared\n');
        } else if (cmd === '/clear') {
          history.splice(0, history.length, ...history.filter((m) => m.role === 'system'));
          process.stderr.write('conversation cleared\n');
        } else if (cmd === '/save') {
          if (!arg) process.stderr.write('usage: /save FILE\n');
          else {
            const { AtomicFile } = await import('../atomic.js');
            const f = new AtomicFile(arg);
            await f.write(`${JSON.stringify({ model, messages: history }, null, 2)}\n`);
            await f.commit();
            process.stderr.write(`saved ${history.length} messages to ${arg}\n`);
          }
        } else process.stderr.write(`unknown command ${cmd}; ${HELP}\n`);
        continue;
      }
      history.push({ role: 'user', content: text });
      let answer = '';
      try {
        for await (const chunk of await client.chat.stream(buildChatRequest([...history], opts, model), { signal })) {
          const piece = chunk.choices[0]?.delta.content;
          if (piece) {
            answer += piece;
            io.out(piece);
          }
        }
        io.out('\n');
        history.push({ role: 'assistant', content: answer });
      } catch (err) {
        history.pop();
        if (answer) io.out('\n');
        if (signal.aborted) throw err;
        process.stderr.write(`error: ${io.redact((err as Error).message)}\n`);
      }
    }
  } finally {
    rl.close();
    await client.close();
  }
}
