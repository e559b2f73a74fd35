/** The batch engine's failures in the CLI's words: its flags and commands where the library names its options. */
import { wordLines, type BatchError, type OptionWords } from '../batch/errors.js';
import { withoutUserinfo } from '../config/settings.js';
import { counted } from '../internal/counted.js';
import { withInstalledDocs } from './io/installed-docs.js';

const FLAG_WORDS: OptionWords = { model: '--model', endpoint: '--endpoint', split: 'router batch run splits a file into as many batches as it needs' };

/** The flags of a job's plan, which a resumed job keeps. */
const PLAN_FLAGS = { model: '--model', endpoint: '--endpoint', provider: '--provider-only / --no-fallbacks', maxRequests: '--max-requests', maxBytes: '--max-bytes', fresh: '--new' };

/** The lines of the error, as the CLI says them. */
export function batchLines(err: BatchError): string[] {
  if (err.data?.about === 'bad_lines') return wordLines(err.data.templates, FLAG_WORDS);
  return err.lines ?? [batchMessage(err)];
}

function batchMessage(err: BatchError): string {
  const d = err.data;
  switch (d?.about) {
    case 'resume_with_input':
      return `--resume ${d.job} takes no file: the job remembers ${d.input}`;
    case 'resume_with_plan': {
      const flag = PLAN_FLAGS[d.option];
      if (d.option === 'fresh') return `--new starts another job; it does not go with --resume`;
      return `--resume ${d.job} keeps the job's own ${d.option === 'provider' ? 'provider preferences' : flag.slice(2)} (${d.kept}): leave ${flag} out (the file run with --new makes a job with other settings)`;
    }
    case 'no_model':
      return 'no model: the bodies name none; give --model (or set a default: router config set model …)';
    case 'lost_create':
      return `shard ${d.shard} of ${d.job}: the answer to its create was lost, and ${counted(d.matches.length, 'batch', 'batches')} ${d.matches.length === 1 ? 'matches' : 'match'} it: ${d.matches.join(', ')}. Its own is known by its results once it has ended: take the job up again then (router batch run --resume ${d.job})`;
    case 'lost_unlisted':
      return `shard ${d.shard} of ${d.job} (${d.lines} of its input): the answer to its create, sent at ${d.sent_at}, was lost, and this service has no batch listing to find its batch by, so router does not send it again on its own. If no batch was made (see ${withInstalledDocs('docs/real-service-batches.md')}), send it again knowingly, which may bill it twice: router batch run --resume ${d.job} --resubmit-lost --watch`;
    case 'not_its_batch':
      return `shard ${d.shard} of ${d.job}: ${d.batch}, taken for it after its create's answer was lost, is not its batch (its results carry other ids); it is set aside, and router batch run --resume ${d.job} looks for the shard's batch again`;
    case 'job_busy':
    case 'job_running_here': {
      // One CLI process runs one job: "this process" is another command run in the same process (tests).
      const pid = d.about === 'job_busy' ? d.pid : process.pid;
      return `${d.job} is being run by process ${pid}: follow it with router batch job ${d.job} (if no router runs, remove ${d.lock})`;
    }
    case 'not_a_job_id':
      return `"${d.job}" is not a job id (router batch jobs lists them)`;
    case 'no_job':
      return `no job ${d.job} (router batch jobs lists them)`;
    case 'damaged_job':
      return `the record of ${d.job}, ${d.record}, ${d.what} and may be this file's job (its batches may have been sent, and would be paid for twice): fix it, or move its folder away to start over; --new starts another job anyway`;
    case 'shards_running':
      return `${counted(d.running, 'shard')} of ${d.job} ${d.running === 1 ? 'has' : 'have'} not ended yet: follow it with --watch, then retry what failed`;
    case 'input_changed': {
      const why = `the input of ${d.job}, ${d.input}, ${d.gone ? 'is gone' : 'changed since the job was planned'}`;
      if (!d.batches.length) return `${why}: put it back as it was, or run the file anew (router batch run FILE --new)`;
      const one = d.batches.length === 1 ? `router batch get ${d.batches[0]} --results FILE` : `router batch get BATCH --results FILE, for each of ${d.batches.join(', ')}`;
      return `${why}: put it back as it was to take the job up, or get its batches' results as they are: ${one}`;
    }
    case 'other_root': {
      const [made, here] = [withoutUserinfo(d.api_root), withoutUserinfo(d.here)];
      return `${d.job} was made at ${made}, where its batches are, not at ${here}: run it with --api-root ${made} (or the profile that has it), or run the file as another job here with --new`;
    }
    case 'results_owed':
      return `the finalized cost of ${d.batch} exceeds your balance${d.why}: add credits, then run "router batch get ${d.batch}" again to get the results`;
    case 'results_not_ready':
      return `${d.batch} is ${d.status}: results come once it ends (use --watch)`;
    default:
      return err.message;
  }
}
