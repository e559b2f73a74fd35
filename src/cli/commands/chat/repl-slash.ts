/** The slash commands of `router chat -i` (/model, /system, /role, /attach, /save, …) and the conversation they change. */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import type { ChatMessage } from '../../../client/types.js';
import { isModelId, MODEL_ID_SYNTAX } from '../../../client/facts.js';
import type { RunContext } from '../../run.js';
import type { ChatOptions } from './request.js';
import { readAttachments, type Attachment } from '../../answers/attach.js';
import type { Model } from '../../../client/resources/models.js';
import type { ToolSet } from '../../../kit/toolset.js';
import { cliErrorOf } from '../../kit-words.js';
import { namedBy } from './repl-checks.js';
import type { ModelInUse } from './repl-more.js';
import type { PendingFragments } from './repl-fragments.js';
import { modelShapeHint } from '../../flags/options.js';
import { counted } from '../../../internal/counted.js';
import { helpWidth } from '../../io/installed-docs.js';
import { cut } from '../../io/described.js';
import { visible } from '../../../internal/visible.js';

/** What was typed, quoted in a line: control characters escaped, cut to 80 columns with "…" (as /tools quotes a description). */
export const typed = (text: string): string => cut(visible(text), 80);

export interface Conversation extends ModelInUse {
  history: ChatMessage[];
  /** Attachments for the next message (/attach, or -a given with -i). */
  attached: Attachment[];
  /** Fragments for the next message (/fragment, -f), and --sf's, kept with the first turn answered. */
  fragments: PendingFragments;
  /** Messages with attachments, as the saved conversation keeps them (by reference). */
  recorded: WeakMap<ChatMessage, ChatMessage>;
  /** The service's model list (fetched once, when /model or /role needs it); undefined when it cannot be read. */
  models: () => Promise<Model[] | undefined>;
  /** --tools and --mcp: run in each turn. */
  tools?: ToolSet;
  answered: string[]; // the models that answered, in the order they first did (/save's title)
}

/** A slash command; returns false for /exit. A failure prints one line and the conversation goes on. */
export async function slash(ctx: RunContext<ChatOptions>, text: string, c: Conversation): Promise<boolean> {
  const io = ctx.io;
  const [cmd, ...rest] = text.split(/\s+/);
  const arg = rest.join(' ');
  // A file named here (/save, /attach) as a shell would take it: no shell expands a leading ~ on this line.
  const path = arg.replace(/^~(?=\/|$)/, () => io.env.HOME ?? homedir());
  const checks = await import('./repl-checks.js');
  // "/clear all", "/exit now": refused in one line, nothing done, rather than done as if the word were not there.
  if (arg && checks.NO_ARGUMENT.has(cmd!)) io.err(`usage: ${cmd} takes no argument\n`);
  else if (cmd === '/exit' || cmd === '/quit') return false;
  else if (cmd === '/help') io.err(`${checks.replHelp(helpWidth(io.stderr, io.stderrTTY))}\n`);
  else if (cmd === '/model') {
    const id = checks.aliasedModel(arg, io.env);
    if (!arg) io.err(`usage: /model ${MODEL_ID_SYNTAX}\n`);
    // As --model says it: a bare slug of the emulator's gets its guess.
    else if (!isModelId(id)) io.error(`/model: ${typed(arg)} must look like ${MODEL_ID_SYNTAX}${modelShapeHint(arg)}; the model stays`);
    else {
      const models = await c.models();
      await checks.checkReplModel(id, models);
      io.err(`model: ${typed((await (await import('./repl-more.js')).useModel(ctx, c, id))!)}\n`);
      checks.pendingNotTaken(io, models?.find((m) => m.id === id), c.attached);
    }
  } else if (cmd === '/system') {
    const at = c.history.findIndex((m) => m.role === 'system');
    if (at >= 0) c.history.splice(at, 1);
    if (arg) c.history.unshift({ role: 'system', content: arg });
    io.err(arg ? 'system message set\n' : 'system message cleared\n');
  } else if (cmd === '/role') {
    if (!arg) io.err('usage: /role NAME (router roles list)\n');
    else {
      await (await import('./repl-more.js')).switchRole(ctx, arg, c).catch(namedBy('/role'));
      if (c.attached.length && c.model) checks.pendingNotTaken(io, (await c.models())?.find((m) => m.id === c.model), c.attached);
    }
  } else if (cmd === '/attach') {
    if (!arg) io.err('usage: /attach PATH|URL\n');
    else if (arg === '-') io.error('/attach -: stdin is this terminal; attach a file (/attach PATH)');
    else {
      const [a] = await readAttachments([path], io).catch((caught: unknown) => {
        // Said as typed here: /attach, not the flag.
        const err = cliErrorOf(caught) ?? caught;
        if (err instanceof Error) err.message = err.message.replace(/^--attach\b/, '/attach');
        throw err;
      });
      c.attached.push(a!);
      io.err(`attached ${typed(arg)} (${a!.mediaType}${a!.data ? `, ${counted(a!.data.length, 'byte')}` : ''}); it goes with the next message\n`);
      // Said now, not as a refusal after the message is typed.
      if (c.model) checks.pendingNotTaken(io, (await c.models())?.find((m) => m.id === c.model), [a!], 'or /model one that takes it');
    }
  } else if (cmd === '/fragment') await (await import('./repl-fragments.js')).addFragment(ctx, path, c.fragments).catch(namedBy('/fragment'));
  else if (cmd === '/tools') (await import('./repl-tools.js')).listTools(io, c.tools);
  else if (cmd === '/clear') {
    c.history.splice(0, c.history.length, ...c.history.filter((m) => m.role === 'system'));
    const dropped = c.attached.splice(0).length;
    c.answered.splice(0);
    io.err(`conversation cleared${dropped ? `, ${dropped === 1 ? 'the attachment' : `${dropped} attachments`} too` : ''}\n`);
  } else if (cmd === '/save' || cmd === '/save!') {
    if (!arg) io.err(`usage: ${cmd} FILE\n`);
    // A file there stays unless /save! says to replace it (a typo in a name would lose another conversation).
    else if (cmd === '/save' && statSync(path, { throwIfNoEntry: false })?.isFile()) io.error(`/save: ${typed(arg)} exists: /save! ${typed(arg)} replaces it, or give another name`);
    else {
      const { OutputFile } = await import('../../io/output-file.js');
      await (async () => {
        const f = OutputFile.open(path);
        await f.write(/\.(md|markdown)$/i.test(path) ? checks.conversationMarkdown(c.answered.length ? c.answered : [c.model], c.history.map((m) => c.recorded.get(m) ?? m)) : `${JSON.stringify({ model: c.model, messages: c.history }, null, 2)}\n`);
        await f.commit();
      })().catch(namedBy(cmd));
      io.err(`saved ${counted(c.history.length, 'message')} to ${typed(arg)}\n`);
    }
  } else io.err(checks.unknownReplCommand(cmd));
  return true;
}
