import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFixtureServer, type FixtureServer } from './fixture-server.js';

/**
 * Names a server may send that a table must measure as a terminal shows them: wide letters (two columns), a combining
 * mark (none); control characters (an escape that retitles the window and clears the screen, a tab, a C1 CSI) and
 * invisible format characters (a zero-width space, a soft hyphen, a lone zero-width joiner, a byte-order mark: one
 * column to cli-table3's string-width, none or one on a terminal) that must be shown escaped, as must a bidi override
 * and isolate (a name `rtl\u202egpj.exe` reads `rtlexe.jpg`). Each with its own number, to find its row's cells by.
 */
export const ODD_NAMES = [
  '日本語モデル',
  'e\u0301mile\u0301',
  'zero\u200bwidth',
  'evil\x1b]0;pwned\x07\x1b[2J',
  'tab\there',
  'c1\x9b31m',
  'soft\u00adhyphen',
  'lone\u200djoiner\ufeff',
  'rtl\u202egpj.exe',
  'iso\u2067late\u2069d',
  'plain',
];

/**
 * Names only the CLI's measure (src/cli/markdown/runs.ts) and cli-table3's are asked about, not tmux: terminals differ
 * on them. A skin tone (👍🏽) is two columns, as most terminals and string-width show it; tmux 3.3a shows four (the
 * modifier as a picture of its own: its row one line too wide in table-widths-terminal.test.ts, tried), so it is not
 * among ODD_NAMES.
 */
export const EMOJI_NAMES = ['🎉 party', '👨‍👩‍👧 family', '👍🏽 thumbs', '🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f} flag'];

const model = (name: string, i: number) => ({
  id: `acme/m${i}`,
  name,
  created: 1,
  description: '',
  context_length: 1000 + i * 1111,
  architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'], tokenizer: 'Other', instruct_type: null },
  pricing: { prompt: '0.000001', completion: '0.000002' },
  top_provider: { is_moderated: false },
  per_request_limits: null,
  supported_parameters: [],
  default_parameters: {},
  canonical_slug: `acme/m${i}`,
  hugging_face_id: null,
});

const batch = (name: string, i: number) => ({
  id: `batch_${i}`,
  object: 'batch',
  endpoint: '/v1/chat/completions',
  model: name,
  status: 'completed',
  request_counts: { total: 1000 + i * 1111, completed: 1, failed: 0 },
  created_at: Math.floor(Date.now() / 1000) - 60,
  finalized_at: null,
});

/** A server listing a model and a batch by each name (models `acme/mI` with context 1000 + I·1111, batches `batch_I`). */
export function oddNamesServer(names: readonly string[]): Promise<FixtureServer> {
  return startFixtureServer({
    'GET /api/v1/models': { body: { data: names.map(model) } },
    'GET /api/v1/batches': { body: { object: 'list', data: names.map(batch), first_id: 'batch_0', last_id: `batch_${names.length - 1}`, has_more: false } },
  });
}

/** A usage ledger in `folder` with one call of each model name (for `router usage --by model`, a boxed table). */
export function oddNamesLedger(folder: string, names: readonly string[]): void {
  const time = new Date().toISOString();
  const line = (model: string) => ({ time, profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model, cost: 0.000002 });
  writeFileSync(join(folder, 'usage.jsonl'), names.map((n) => `${JSON.stringify(line(n))}\n`).join(''));
}
