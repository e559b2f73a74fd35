import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the scripting files (--json FIELDS, --jq, router api, usage, conversations) list and filter: a
 * three-line JSONL file sent once as a batch and once as a job of two shards, and one kept chat.
 */
export async function seedScripting(t: { dir: string; run: (args: string[]) => Promise<{ stdout: string }> }): Promise<{ jsonl: string; batchId: string; jobId: string }> {
  const jsonl = join(t.dir, 'req.jsonl');
  writeFileSync(jsonl, ['a', 'b', 'c'].map((id) => JSON.stringify({ custom_id: id, body: { model: 'local/echo', messages: [{ role: 'user', content: id }] } })).join('\n'));
  const batchId = (await t.run(['batch', 'create', jsonl])).stdout.trim();
  const jobId = (await t.run(['batch', 'run', jsonl, '--max-requests', '2'])).stdout.trim();
  await t.run(['chat', '--model', 'local/echo', 'kept']);
  return { jsonl, batchId, jobId };
}
