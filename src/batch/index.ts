/**
 * The batch engine, for programs as for the CLI: check a requests file, create a batch from it in
 * pieces, follow a batch, read its results, and run files of any size as jobs (`runJob`). It knows
 * nothing of a command line; it takes an AbortSignal, says what happens through the events it is
 * given, and throws the client's errors or a BatchError.
 */
export { FileLockTimeout } from '../internal/lock-timeout.js';
export { BatchError, wordLines, type BatchErrorData, type BatchErrorReason, type OptionWords } from './errors.js';
export { checkInputFile, scanRequests, type Scan, type ScanHooks, type ScanLimits } from './scan.js';
export { requestStream } from './upload.js';
export { batchError, streamResults, type ResultsSink } from './results.js';
export { watchBatch, type WatchEvents, type WatchOptions } from './watch.js';
export { findCreated, newestBatch, type CreatedQuery, type Watermark } from './find-created.js';
export { driveJob, openJob, planInput, runJob, type DriveOptions, type HeldJob, type JobEvents, type JobOutcome, type OpenJobOptions, type RunJobOptions } from './job/run.js';
export { jobSummary, totals, type JobTotals } from './job/progress.js';
export { isFinished, jobsDir, listJobs, loadJob, type JobRecord, type RequestCounts, type ShardRecord } from './job/store.js';
export type { MergeCounts, MergeFormat } from './job/merge.js';
