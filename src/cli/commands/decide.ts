/** `router decide`: yes/no, choice and score questions about some content (POST /alpha/decisions). */
import { usageFields } from '../../kit/spend/ledger.js';
import { usageLine } from '../io/output.js';
import type { DecisionQuestion, DecisionResponse } from '../../client/types.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import type { FlagValues } from '../flags/flags.js';
import { collect, modelFlag, OPEN_USER_FLAG, OUTPUT_FLAGS, PROVIDER_FLAGS, SESSION_FLAGS } from '../flags/options.js';
import { usage } from '../exit-codes.js';
import { boundNote, guardSpend, FIXED_SPEND_FLAGS } from '../spend/spend-guard.js';
import { providerFrom, readJsonFile, readTextFile } from '../io/input.js';
import { blankInput } from '../../internal/blank.js';
import { tabLine } from '../io/described.js';

const FLAGS = {
  session: SESSION_FLAGS.session,
  user: OPEN_USER_FLAG,
  state: { flags: '--state <file>', help: 'the content: a text or JSON file ("-" for stdin)' },
  stateText: { flags: '--state-text <text>', help: 'the content, inline' },
  questions: { flags: '--questions <file>', help: 'questions from a JSON file: {"key": {"type", "instructions", "criteria"}}' },
  noul: { flags: '--noul <key-and-instructions...>', help: 'yes/no question: --noul KEY "INSTRUCTIONS" [--true "…"] [--false "…"]' },
  true: { flags: '--true <text>', help: 'what "yes" means (for the last --noul)', parse: collect },
  false: { flags: '--false <text>', help: 'what "no" means (for the last --noul)', parse: collect },
  choice: { flags: '--choice <key-and-instructions...>', help: 'choice question: --choice KEY "INSTRUCTIONS" --option k="…" (1 or more)' },
  option: { flags: '--option <k=description>', help: 'an option of the last --choice, repeatable', parse: collect },
  score: { flags: '--score <key-and-instructions...>', help: 'score question: --score KEY "INSTRUCTIONS" --level "…" (1 or more, lowest first)' },
  level: { flags: '--level <text>', help: 'a level of the last --score, repeatable, lowest first', parse: collect },
  model: modelFlag('decision model, <author>/<slug>', 'chat'),
  ...PROVIDER_FLAGS,
  json: { flags: '--json', help: 'print the decision response' },
  usage: OUTPUT_FLAGS.usage,
  ...FIXED_SPEND_FLAGS,
} as const;

export const decide = defineCommand({
  name: 'decide',
  logsUsage: true,
  jsonFields: ['id', 'model', 'provider', 'usage', 'answers'],
  summary: 'ask structured questions about content (alpha)',
  description: 'Ask yes/no (noul), choice and score questions about some content. Alpha: the shape may change. Needs a management key.',
  flags: FLAGS,
  notes: `Answers: noul = P(yes) in 0..1; choice = one option with its probabilities; score = the probability-weighted level (0..n-1). confidence = how concentrated the distribution is.
Piped, one tab-separated line per question: key, type, answer, confidence, probabilities.`,
  examples: [
    'router decide --state review.txt --model local/judge \\\n--noul spam "Is this spam?"',
    'router decide --state-text "The food was cold" --model local/judge \\\n--score sentiment "How positive?" \\\n--level negative --level neutral --level positive',
    'router decide --state ticket.json --questions questions.json \\\n--model local/judge --json',
  ],
  run: runDecide,
});

/** Rebuilds the question flags in the order given, since each detail flag belongs to the question before it. */
export function questionsFromArgv(argv: string[]): Record<string, DecisionQuestion> {
  const out: Record<string, DecisionQuestion> = {};
  let current: { key: string; q: Record<string, unknown> } | undefined;
  const take = (i: number, flag: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw usage(`${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (flag === '--noul' || flag === '--choice' || flag === '--score') {
      const key = inline ?? take(i, flag);
      if (inline === undefined) i++;
      const instructions = take(i, `${flag} ${key}`);
      i++;
      if (!key.trim()) throw usage(`${flag}: the question key is blank`);
      if (!instructions.trim()) throw usage(`${flag} ${key}: the instructions are blank`);
      if (out[key]) throw usage(`question "${key}" is given twice`);
      const type = flag.slice(2) as DecisionQuestion['type'];
      current = { key, q: { type, instructions } };
      out[key] = current.q as unknown as DecisionQuestion;
      continue;
    }
    if (flag === '--true' || flag === '--false' || flag === '--option' || flag === '--level') {
      const value = inline ?? take(i, flag);
      if (inline === undefined) i++;
      const want = flag === '--true' || flag === '--false' ? 'noul' : flag === '--option' ? 'choice' : 'score';
      if (!current || current.q.type !== want) throw usage(`${flag} must follow a --${want} question`);
      const described = want === 'choice' ? value.slice(value.indexOf('=') + 1) : value;
      if (!described.trim()) throw usage(`--${want} ${current.key}: ${flag} "${value}" has a blank description`);
      if (want === 'noul') {
        const c = (current.q.criteria ??= {}) as Record<string, string>;
        c[flag.slice(2)] = value;
      } else if (want === 'choice') {
        const eq = value.indexOf('=');
        if (eq <= 0 || !value.slice(0, eq).trim()) throw usage(`--option must be key=description, got "${value}"`);
        ((current.q.criteria ??= {}) as Record<string, string>)[value.slice(0, eq)] = value.slice(eq + 1);
      } else {
        ((current.q.criteria ??= []) as string[]).push(value);
      }
    }
  }
  for (const [key, q] of Object.entries(out)) {
    const c = (q as { criteria?: unknown }).criteria;
    if (q.type === 'noul' && c && Object.keys(c).length !== 2) throw usage(`--noul ${key}: give both --true and --false, or neither`);
    if (q.type === 'choice' && (!c || Object.keys(c).length < 1)) throw usage(`--choice ${key}: give its options with --option`);
    if (q.type === 'score' && (!c || (c as string[]).length < 1)) throw usage(`--score ${key}: give its levels with --level`);
  }
  return out;
}

/**
 * A question of --questions: a known type, its instructions and each criterion a string, a JSON object
 * or an array (the deployed service takes all three; api.md shows strings, and its service says so
 * itself), a choice's option perhaps null (no description); no text blank.
 */
function checkFileQuestion(key: string, q: unknown): void {
  const { type, instructions, criteria } = (q && typeof q === 'object' ? q : {}) as { type?: unknown; instructions?: unknown; criteria?: unknown };
  if (type !== 'noul' && type !== 'choice' && type !== 'score') throw usage(`--questions: "${key}": type must be noul, choice or score`);
  if (!isDecisionText(instructions)) throw usage(`--questions: "${key}": instructions must be a string, a JSON object or an array`);
  // Blank texts are refused as the flags refuse them (--noul KEY " ").
  if (typeof instructions === 'string' && instructions.trim() === '') throw usage(`--questions: "${key}": the instructions are blank`);
  const descriptions = criteria && typeof criteria === 'object' ? Object.entries(criteria).filter(([, d]) => !(type === 'choice' && d === null)) : [];
  if (descriptions.some(([, d]) => !isDecisionText(d))) throw usage(`--questions: "${key}": each of its criteria must be a string, a JSON object or an array`);
  const blank = descriptions.find(([, d]) => typeof d === 'string' && d.trim() === '');
  if (blank) throw usage(`--questions: "${key}": criterion "${blank[0]}" has a blank description`);
}

const isDecisionText = (v: unknown) => typeof v === 'string' || (!!v && typeof v === 'object');
/** A criterion as one line: a string as it is, a JSON one as JSON. */
const criterionText = (c: unknown) => (c === undefined ? '' : typeof c === 'string' ? c : JSON.stringify(c));

/** A probability or score with two decimals; '?' for an answer that lacks it. */
const fmt = (p: unknown) => (typeof p === 'number' ? p.toFixed(2) : '?');

/** A score's level by the name the request gave it (the service keys its probabilities by index). */
function levelName(q: DecisionQuestion | undefined, index: string): string {
  const named = q?.type === 'score' && Array.isArray(q.criteria) ? q.criteria[Number(index)] : undefined;
  return named === undefined ? index : criterionText(named);
}

async function runDecide(ctx: RunContext<FlagValues<typeof FLAGS>>): Promise<void> {
  const { io, opts, argv, signal, connect } = ctx;
  if (!opts.model) throw usage('no model: give --model (a decision model, e.g. local/judge)');
  if (opts.state !== undefined && opts.stateText !== undefined) throw usage('give the content with one of --state FILE or --state-text TEXT, not both');
  // Piped content is the state when no flag names one (cat review.txt | router decide …) and stdin is not the questions.
  const stateFile = opts.state ?? (opts.stateText === undefined && !io.stdinTTY && !io.noStdin && opts.questions !== '-' ? '-' : undefined);
  if (stateFile === undefined && opts.stateText === undefined) throw usage('no content: give --state FILE, --state-text TEXT, or pipe it on stdin');
  if (opts.stateText !== undefined && !opts.stateText.trim()) throw usage('--state-text is empty');
  let state: unknown = opts.stateText;
  if (stateFile !== undefined) {
    const text = await readTextFile('--state', stateFile, io);
    if (!text.trim()) throw usage(opts.state === undefined ? `no content: ${blankInput(text)} (give --state FILE or --state-text TEXT)` : `--state: ${blankInput(text, opts.state === '-' ? 'stdin' : opts.state)}`);
    try {
      const parsed = JSON.parse(text);
      state = parsed && typeof parsed === 'object' ? parsed : text;
    } catch {
      state = text;
    }
  }
  let questions = questionsFromArgv(argv.slice(argv.indexOf('decide') + 1));
  if (opts.questions !== undefined) {
    const fromFile = await readJsonFile('--questions', opts.questions, io);
    if (!fromFile || typeof fromFile !== 'object' || Array.isArray(fromFile)) throw usage('--questions must hold a JSON object of questions');
    for (const [key, q] of Object.entries(fromFile)) checkFileQuestion(key, q);
    questions = { ...(fromFile as Record<string, DecisionQuestion>), ...questions };
  }
  if (Object.keys(questions).length === 0) throw usage('no questions: use --noul, --choice, --score or --questions FILE');
  const connected = await connect({ management: true });
  const { client } = connected;
  let res: DecisionResponse;
  let guard;
  try {
    const provider = providerFrom(opts);
    const body = { model: opts.model, state: state as string, questions, ...(provider ? { provider } : {}), ...(opts.session ? { session_id: opts.session } : {}), ...(opts.user ? { user: opts.user } : {}) };
    guard = await guardSpend(ctx, connected, { body, models: [body.model], completes: true });
    if (guard.dryRun) return;
    res = await client.decisions.create(body, { signal, answering: (id) => ctx.answering(id, '/alpha/decisions') });
  } finally {
    await client.close();
  }
  ctx.logUsage({ endpoint: '/alpha/decisions', model: res.model, id: res.id, ...usageFields(res.usage as unknown as Record<string, unknown>) });
  if (opts.usage) ctx.closingNote(usageLine(res.usage ? { input: res.usage.input_tokens, output: res.usage.output_tokens, total: res.usage.input_tokens + res.usage.output_tokens, cost: res.usage.cost } : undefined) + boundNote(guard));
  if (opts.json) return io.json(res);
  const rows = Object.entries(res.answers).map(([key, a]) => {
    if (!a || typeof a !== 'object') return [key, '?', '', '', ''];
    if (a.type === 'noul') return [key, 'noul', `P(yes) ${fmt(a.noul)}`, '', ''];
    const probs = Object.entries(a.probabilities ?? {}).map(([k, p]) => `${a.type === 'score' ? levelName(questions[key], k) : k}=${fmt(p)}`).join(' ');
    if (a.type === 'choice') return [key, 'choice', a.choice, fmt(a.confidence), probs];
    return [key, 'score', `${fmt(a.score)} (${criterionText(a.legend?.[String(Math.round(a.score))])})`, fmt(a.confidence), probs];
  });
  if (io.stdoutTTY) {
    const { table } = await import('../io/table.js');
    io.out(table(io, ['question', 'type', 'answer', 'confidence', 'probabilities'], rows));
  } else for (const r of rows) io.out(tabLine(r));
}
