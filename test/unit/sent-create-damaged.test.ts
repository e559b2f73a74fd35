import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { heldByOthers, holdsDir } from '../../src/kit/spend/budget-hold.js';
import { hearingKeptProblems } from '../../src/internal/kept-state.js';

// A `batch create` killed -9 after its request went: its hold is kept (its batch may exist and spend) while its create's record
// says the answer was never heard. A record there but damaged was read as "answered": the hold went and the budget counted
// nothing for a batch that may be spending. Now it follows the kept-state rule: a record not there is nothing left unanswered;
// one there that cannot be read is said once and never taken for absent: the hold is kept.
let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-sent-damaged-'));
  env = { ROUTER_STATE_DIR: dir };
  mkdirSync(holdsDir(env), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

/** The dead create's hold of 0.5, its record at creates/k.json holding `record` (none: no file). */
function deadCreate(record: string | undefined): string {
  const sentAt = new Date().toISOString();
  const path = join(dir, 'creates', 'k.json');
  mkdirSync(join(dir, 'creates'), { recursive: true });
  if (record !== undefined) writeFileSync(path, record.replaceAll('SENT_AT', sentAt));
  writeFileSync(join(holdsDir(env), `${deadPid()}-abc.json`), JSON.stringify({ profile: 'default', usd: 0.5, pid: deadPid(), time: sentAt, batch: true, sent: { record: path, sent_at: sentAt } }));
  return path;
}

/** What a budgeted check keeps of the dead create's hold, the holds left after it, and the warnings said. */
function checked() {
  const said: string[] = [];
  const kept = hearingKeptProblems((line) => said.push(line), () => heldByOthers(env, 'default').kept);
  return { kept, holds: readdirSync(holdsDir(env)).map((n) => n.replace(/^(batch-sent-)\d+-abc\.json$/, '$1…')), said };
}

it.each([
  ['cut short', '{"sent_at":"SENT_AT","aft'],
  ['not a create record', '{"note":"hand edited"}'],
  ['empty', ''],
])('a create record there but damaged (%s): the hold is kept, and that is said once', (_why, text) => {
  const path = deadCreate(text);
  expect(checked()).toEqual({ kept: 0.5, holds: ['batch-sent-…'], said: [`warning: ${path}: is damaged (not a create record); its create is taken as sent and unanswered, its budget hold kept (its batch may exist)`] });
});

it('a create record that is a folder (cannot be read): kept, said in the words of kept files', () => {
  const path = deadCreate(undefined);
  mkdirSync(path);
  const seen = checked();
  expect([seen.kept, seen.holds, seen.said.length]).toEqual([0.5, ['batch-sent-…'], 1]);
  expect(seen.said[0]).toMatch(new RegExp(`^warning: ${path}: .*; its create is taken as sent and unanswered`));
});

it('controls: a record gone (its answer heard) lets the hold go; a whole record still unanswered keeps it, nothing said', () => {
  deadCreate(undefined);
  expect(checked()).toEqual({ kept: undefined, holds: [], said: [] });
  rmSync(holdsDir(env), { recursive: true });
  mkdirSync(holdsDir(env));
  deadCreate('{"sent_at":"SENT_AT","after":null,"input":"in.jsonl"}');
  expect(checked()).toEqual({ kept: 0.5, holds: ['batch-sent-…'], said: [] });
});
