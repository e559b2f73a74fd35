import type { ChatMessage } from '../../../client/types.js';
import { deltaText } from '../../../client/resources/chat.js';
import { interrupted, type RunContext } from '../../run.js';
import { keepConversation, openConversation } from './conversation.js';
import { buildChatRequest } from './request.js';
import { EXIT, exitCodeForStatus, usage } from '../../exit-codes.js';
import { APIError } from '../../../client/errors.js';
import { readAttachments } from '../../answers/attach.js';
import type { ChatCommandOptions } from './flags.js';
import type { Model } from '../../../client/resources/models.js';
import { noteReplDefault } from '../../answers/answered-by.js';
import { sayKeyInPrompt } from '../../answers/key-in-prompt.js';
import { ask, swallowKeys, type Prompting } from './repl-keys.js';
import { boundWayOut, replStart } from './repl-checks.js';
import { slash, type Conversation } from './repl-slash.js';
import { waitingFor, waitingSpinner } from '../../io/spinner.js';
import { counted } from '../../../internal/counted.js';
import { helpWidth } from '../../io/installed-docs.js';

/**
 * `router chat -i`: a conversation that keeps its history, streaming each answer.
 * Needs a terminal on stdin: it never prompts otherwise.
 */
export async function runRepl(ctx: RunContext<ChatCommandOptions>, role?: import('../../saved/roles.js').Role): Promise<void> {
  const { io, opts, signal } = ctx;
  if (!io.stdinTTY) throw usage('--interactive needs a terminal on stdin; pipe the prompt instead (echo hi | router chat)');
  if (!io.canPrompt) throw usage('--interactive asks for input, and --no-input (or ROUTER_NO_INPUT) forbids it: pipe the prompt instead');
  const more = await import('./repl-more.js');
  more.replOptions(ctx);
  if (opts.attach?.includes('-')) throw usage('--attach -: stdin is the terminal chat -i reads; attach a file');
  const saved = await openConversation(ctx);
  ctx.useCommandModel(saved);
  const modelOptions = (await import('../../saved/model-options.js')).switchModelOptions(ctx.cmd, opts, {}, (await ctx.settings()).model, io.env);
  const connected = await ctx.connect();
  const { client, settings } = connected;
  const { guardNext, guardSpend } = await import('../../spend/spend-guard.js');
  const { usageFields } = await import('../../../kit/spend/ledger.js');
  const { reportError } = await import('../../errors.js');
  let models: Promise<Model[] | undefined> | undefined;
  const { loadTools, mcpFrom, mcpServers, openTools } = await import('../../tools/tool-runner.js');
  const tools = await openTools({ local: await loadTools(opts.tools, io, 'chat'), mcp: mcpServers(io, opts.mcp, settings), mcpFrom: mcpFrom(opts.mcp, settings), env: io.env, secrets: [settings.apiKey, settings.managementKey], signal, timeoutSeconds: opts.toolTimeout ?? ctx.flags.timeout, answers: (await import('../../tools/mcp-answers.js')).mcpAnswers(io, { roots: opts.mcpRoot, cannotAsk: 'chat -i does not answer them' }, {}) }).catch(async (err: unknown) => {
    await client.close();
    throw err;
  });
  const recorded = new WeakMap<ChatMessage, ChatMessage>();
  const rf = await import('./repl-fragments.js');
  const read = await rf.replFragments(ctx);
  const c: Conversation = { template: (await import('../../saved/role-params.js')).rolePrompt(role, opts.param ?? {}), model: settings.model, history: (await import('../../answers/fragments.js')).sentHistory(io.env, saved?.messages ?? [], opts.system, read, recorded), attached: await readAttachments(opts.attach, io), fragments: { user: read?.user ?? [], system: read?.system ?? [] }, recorded, tools, modelOptions, answered: [saved?.model ?? saved?.answered_by].filter((m) => m !== undefined), models: () => (models ??= import('./repl-checks.js').then((m) => m.modelList(client, ctx.env, settings.apiRoot))) };
  let kept = saved;
  if (saved) io.err(`continuing ${saved.id} (${counted(saved.messages.filter((m) => m.role === 'user').length, 'turn')})\n`);
  const prompting: Prompting = { history: more.loadHistory(ctx.env), historySize: more.HISTORY_LINES, fresh: [], ahead: [] };
  const otherTools = (await import('./repl-other-words.js')).heldBackOnce();
  io.err(replStart(c.model, helpWidth(io.stderr, io.stderrTTY)));
  try {
    for (;;) {
      const a = await ask(io, prompting, signal);
      if (signal.aborted) throw signal.reason;
      // Ctrl-C or Ctrl-D on an empty prompt ends the session.
      if ('end' in a && a.typed === undefined) {
        if (a.end === 'interrupt') throw interrupted();
        return;
      }
      // Ctrl-C on a message's next line drops that message, as a shell drops a command it was continuing: it does not exit.
      if ('end' in a && a.end === 'interrupt') {
        io.err('(message dropped)\n');
        continue;
      }
      // Ctrl-D on a message's next line ends the message there: it is sent.
      const line = 'end' in a ? a.typed! : a.line;
      more.saveHistory(ctx.env, prompting.fresh, ctx.logging);
      // A message of several lines keeps its first line's indent (pasted code); its blank lines around go.
      let text = line.includes('\n') ? line.replace(/^([ \t]*\n)+/, '').trimEnd() : line.trim();
      if (!text) continue;
      if (text === '/edit') {
        try {
          text = await more.editMessage(io);
        } catch (err) {
          reportError(err, io);
          continue;
        }
        if (!text) {
          io.err('(empty message: nothing sent)\n');
          continue;
        }
        io.err(`${text}\n`);
      } else if (text.startsWith('/') && !text.includes('\n')) {
        // A slash command is one line: text of more (a paste starting with a path or a // comment) is a message.
        try {
          if (!(await slash(ctx, text, c))) return;
        } catch (err) {
          reportError(err, io);
        }
        continue;
      }
      const heldBack = otherTools(text);
      if (heldBack) {
        io.err(heldBack);
        continue;
      }
      const extras = { attachments: c.attached.splice(0), fragments: c.fragments.user.splice(0) };
      if (c.template) text = c.template(text); // a role's prompt text, the message its $input (as chat --role sends it)
      // As a one-shot chat says it: a known key typed here is sent, and kept, as typed.
      sayKeyInPrompt(io, text);
      const user = rf.userMessage(text, extras.attachments, extras.fragments, c.recorded);
      c.history.push(user);
      const answerStop = new AbortController();
      const stop = () => answerStop.abort(interrupted());
      const keys = { release: swallowKeys(io, stop) };
      let answer = '';
      let answered: string | undefined;
      let turn: Awaited<ReturnType<typeof guardSpend>> | undefined;
      // An answer stopped once begun is charged for what was generated: kept in the ledger by its id, without a cost.
      let stopped: (() => void) | undefined;
      const out = await more.answerWriter(io, opts);
      const reasoning = (await import('../../answers/request-extras.js')).reasoningPrinter(io, opts);
      const req = buildChatRequest([...c.history], opts, c.model);
      const stopWaiting = waitingSpinner(io, waitingFor(req.model ?? req.models?.[0]));
      try {
        // Each turn is a call: held to the budgets (a reached one is this turn's error) and put in the ledger.
        const guarded = (body: typeof req) => ({ body, models: [req.model, ...(req.models ?? [])], limitField: 'max_completion_tokens', limitFlag: '--max-tokens', explicitLimit: opts.maxTokens !== undefined, completes: true });
        // The tools' declarations are sent with every round: the bound counts them.
        if (c.tools) req.tools = c.tools.chatTools();
        turn = await guardSpend(ctx, connected, guarded(req));
        const guard = turn;
        let spent = 0;
        let added: ChatMessage[] = [];
        const print = (piece: string) => {
          reasoning.end();
          answer += piece;
          out.write(piece);
        };
        const log = (used: Record<string, unknown> | undefined, id: string | undefined, model?: string) => {
          answered ??= model;
          spent += typeof used?.cost === 'number' ? used.cost : (guard.bound ?? 0);
          ctx.logUsage({ endpoint: '/v1/chat/completions', model: model ?? answered ?? req.model ?? req.models?.[0], ...(id ? { id } : {}), ...usageFields(used) });
        };
        const turnSignal = AbortSignal.any([signal, answerStop.signal]);
        if (c.tools) {
          const tt = await import('./repl-tools.js');
          const loop = { set: c.tools, maxRounds: opts.maxToolRounds ?? 8, approve: opts.approve ? tt.replApprover(io, turnSignal, { pause: () => keys.release(), resume: () => void (keys.release = swallowKeys(io, stop)) }, stop) : false, json: false, signal: turnSignal, timeout: opts.toolTimeout ?? ctx.flags.timeout, timeoutFlag: opts.toolTimeout === undefined ? '--timeout' : '--tool-timeout' };
          const t = await tt.toolTurn(io, client, req, loop, print, log, (body) => guardNext(ctx, connected, guard, guarded(body), spent), (id) => ctx.answering(id, '/v1/chat/completions'), (text) => reasoning.write(text));
          added = t.added;
          // What the model said before its calls was shown; the answer kept is its last, after them.
          answer = t.text;
        } else {
          let used: Record<string, unknown> | undefined;
          let id: string | undefined;
          const assembler = new (await import('../../answers/answer-extras.js')).MessageAssembler();
          for await (const chunk of await client.chat.streamText(req, { signal: turnSignal })) {
            if (chunk.usage) used = chunk.usage as unknown as Record<string, unknown>;
            if (chunk.id && !id) ctx.answering((id = chunk.id), '/v1/chat/completions');
            if (id && !stopped) stopped = () => log(used, id);
            if (chunk.model) answered ??= chunk.model;
            reasoning.write(assembler.add(chunk));
            const piece = deltaText(chunk);
            if (piece) print(piece);
          }
          stopped = undefined;
          log(used, id);
        }
        reasoning.end();
        out.end(true);
        noteReplDefault(io, req.model ?? req.models?.[0], answered);
        const by = answered ?? req.model;
        if (by && !c.answered.includes(by)) c.answered.push(by);
        c.history.push(...added);
        // The turn's cost is in the ledger: it holds nothing of the budgets while the next is typed.
        turn.hold?.release();
        rf.keepSent(ctx, extras.fragments, c.fragments);
        kept = keepConversation(ctx, kept, c.model, c.history.map((m) => c.recorded.get(m) ?? m), answer, text, answered);
        c.history.push({ role: 'assistant', content: answer });
        // Turns another run saved in the meantime come along, so that the next save keeps them; a message
        // with attachments stays as sent (the file keeps them by reference only).
        if (ctx.logging && kept) {
          const sent = new Map(c.history.filter((m) => c.recorded.has(m)).map((m) => [JSON.stringify(c.recorded.get(m)), m]));
          c.history = kept.messages.map((k) => sent.get(JSON.stringify(k)) ?? k);
        }
      } catch (err) {
        stopped?.();
        reasoning.end();
        // Lost, cut or stopped with no line yet: the turn's bound is counted, as a one-shot chat's is (run.ts).
        turn?.hold?.failed(err, signal.aborted || answerStop.signal.aborted);
        turn?.hold?.release();
        // The exchange is dropped; its attachments wait for the next message, unless the service refused
        // the message itself (a model that takes no images): sent again, they would be refused again.
        const refused = reportedCode(err) === EXIT.USAGE && extras.attachments.length > 0;
        if (!refused) c.attached.unshift(...extras.attachments);
        c.fragments.user.unshift(...extras.fragments);
        c.history.splice(c.history.lastIndexOf(user));
        out.end(false);
        if (signal.aborted) throw err;
        if (answerStop.signal.aborted) io.err('(answer stopped)\n');
        else {
          more.sayTurnFailure(io, err, connected, ctx.flags, answer !== '', reportError);
          // At once (no import awaited here): the next line typed is read by the prompt that follows.
          const wayOut = boundWayOut(err, c.history);
          if (wayOut) io.err(wayOut);
        }
        if (refused) io.err(`${extras.attachments.length === 1 ? 'its attachment was' : `its ${extras.attachments.length} attachments were`} dropped (/model one that takes ${extras.attachments.length === 1 ? 'it' : 'them'}, then /attach again)\n`);
      } finally {
        stopWaiting();
        keys.release();
      }
    }
  } finally {
    await Promise.all([client.close(), c.tools?.close()]);
  }
}

/** The exit code a one-shot run would have for the service's answer: a refusal of the request is USAGE. */
const reportedCode = (err: unknown) => (err instanceof APIError ? exitCodeForStatus(err.status) : undefined);
