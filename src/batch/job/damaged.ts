/**
 * Job records listJobs leaves out as damaged, met by a run of an input: one that may be that input's job may have
 * sent its batches, so a new job of the input could pay for them twice. Only one that names another content's SHA-256
 * is another file's (said and left out); one that cannot be read, or names no content, may be anyone's.
 */
import { join } from 'node:path';
import { readLocalText } from '../../internal/local-file.js';
import { sayKeptProblem } from '../../internal/kept-state.js';
import { BatchError } from '../errors.js';
import { jobsDir } from './store.js';

const NAMED_CONTENT = /"sha256"\s*:\s*"([0-9a-f]{64})"/g;

/** Throws a `damaged` BatchError for the first of `ids` that may be the job of the content `sha256`; says the others. */
export function refuseDamagedOf(env: NodeJS.ProcessEnv, ids: readonly string[], sha256: string): void {
  for (const id of ids) {
    const record = join(jobsDir(env), id, 'job.json');
    let text: string | undefined;
    try {
      text = readLocalText(record);
    } catch {
      text = undefined;
    }
    const named = text === undefined ? [] : [...text.matchAll(NAMED_CONTENT)].map((m) => m[1]);
    if (named.length && !named.includes(sha256)) {
      sayKeptProblem(record, 'is damaged or unreadable and left out (fix it, or move its folder away to forget the job)');
      continue;
    }
    const what = text === undefined ? 'cannot be read' : 'is damaged';
    throw new BatchError(
      `the record of ${id}, ${record}, ${what} and may be this input's job (its batches may have been sent, and would be paid for twice): fix it, or move its folder away to start over; fresh starts another job anyway`,
      'damaged',
      undefined,
      { about: 'damaged_job', job: id, record, what },
    );
  }
}
