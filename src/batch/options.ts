/**
 * The numbers and names (a model id too) a program hands `runJob` or `watchBatch`, checked before anything is planned or sent: the
 * CLI's flags check their own, but a program's 0, NaN or typo would otherwise be saved in a job
 * (a record that no longer reads back), cut a file into one-request batches, or poll without pause.
 */
import { BATCH_ENDPOINTS, BATCH_MAX_BYTES, BATCH_MAX_REQUESTS, isModelId, MODEL_ID_MAX, MODEL_ID_SYNTAX } from '../client/facts.js';
import { invalid, type BatchErrorData } from './errors.js';
import { isRecord, shownGiven } from '../internal/shape.js';
import type { JobRecord } from './job/store.js';

function wholeIn(name: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalid(`${name} must be a whole number from ${min} to ${max}, not ${shownGiven(value)}`);
}

function secondsAbove(name: string, value: number | undefined, min: number, inclusive: boolean): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (!inclusive && value === min)) throw invalid(`${name} must be a number of seconds ${inclusive ? 'of at least' : 'over'} ${min}, not ${shownGiven(value)}`);
}

/** What shapes a job: the endpoint and the limits of each batch. */
export function checkPlanOptions(o: { endpoint?: string; model?: string; maxRequests?: number; maxBytes?: number }): void {
  if (o.model !== undefined && o.model.length > MODEL_ID_MAX) throw invalid(`model is ${o.model.length} characters long: a model id has at most ${MODEL_ID_MAX}`);
  if (o.model !== undefined && !isModelId(o.model)) throw invalid(`model must look like ${MODEL_ID_SYNTAX}, not ${shownGiven(o.model)}`);
  if (o.endpoint !== undefined && !(BATCH_ENDPOINTS as readonly string[]).includes(o.endpoint)) throw invalid(`endpoint ${JSON.stringify(o.endpoint)} is not a batch endpoint (${BATCH_ENDPOINTS.join(', ')})`);
  wholeIn('maxRequests', o.maxRequests, 1, BATCH_MAX_REQUESTS);
  wholeIn('maxBytes', o.maxBytes, 1, BATCH_MAX_BYTES);
}

/** How a run follows its job, and where its results go (else a path given as `results` failed only once the batches had run). */
export function checkDriveOptions(o: { interval?: number; offlineTimeout?: number; results?: unknown }): void {
  secondsAbove('interval', o.interval, 0, false);
  secondsAbove('offlineTimeout', o.offlineTimeout, 0, true);
  const r = o.results as { write?: unknown; format?: unknown } | undefined;
  if (r === undefined) return;
  if (typeof r !== 'object' || r === null || typeof r.write !== 'function') throw invalid(`results must be { write, format }, write a function that takes each piece of the results, not ${isRecord(r) ? 'an object without one' : shownGiven(r)}`);
  if (r.format !== undefined && !['results', 'numbered', 'joined'].includes(r.format as string)) throw invalid(`results.format must be results, numbered or joined, not ${shownGiven(r.format)}`);
}

type PlanOption = Extract<BatchErrorData, { about: 'resume_with_plan' }>['option'];

/**
 * A job taken up keeps the plan it was made with: an option of another plan given with `resume`
 * (a model, an endpoint, limits) would be ignored without a word, so it is refused. Its own value is no change.
 */
export function checkResumeOptions(job: JobRecord, o: { endpoint?: string; model?: string; provider?: JobRecord['provider']; maxRequests?: number; maxBytes?: number; fresh?: boolean }): void {
  const provider = (p: JobRecord['provider']) => JSON.stringify(p ?? {});
  const changed: [PlanOption, boolean, string][] = [
    ['fresh', !!o.fresh, ''],
    ['model', o.model !== undefined && o.model !== job.model, job.model],
    ['endpoint', o.endpoint !== undefined && o.endpoint !== job.endpoint, job.endpoint],
    ['provider', o.provider !== undefined && provider(o.provider) !== provider(job.provider), provider(job.provider)],
    ['maxRequests', o.maxRequests !== undefined && o.maxRequests !== job.max_requests, String(job.max_requests)],
    ['maxBytes', o.maxBytes !== undefined && o.maxBytes !== job.max_bytes, String(job.max_bytes)],
  ];
  const found = changed.find(([, differs]) => differs);
  if (!found) return;
  const [option, , kept] = found;
  const message = option === 'fresh' ? `resume ${job.id} takes up that job; fresh starts another (give input instead)` : `resume ${job.id} keeps the job's own ${option} (${kept}): leave ${option} out, or run the input with fresh for a job of another plan`;
  throw invalid(message, { about: 'resume_with_plan', job: job.id, option, kept });
}
