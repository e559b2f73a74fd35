/**
 * Attachments the named model cannot take (by its input modalities in the model list), refused before anything is
 * sent: the service's 400 ("does not take file input") named no way out. A text file (notes.txt, data.csv) goes
 * in the prompt with -f, as llm's fragments do; llm too refuses an attachment type a model does not list.
 */
import type { RouterClient } from '../../client/index.js';
import { usage } from '../exit-codes.js';
import type { Attachment } from '../../kit/attachments.js';

/** A file whose words are the point: sent as a fragment's text rather than as a file part. */
const isTextFile = (a: Attachment) => a.kind === 'file' && /^(text\/|application\/(json|xml)$)/.test(a.mediaType);

/** Throws a usage error (exit 2) for the first attachment `model` does not take; says nothing when the list cannot be read or does not hold it. */
export async function checkAttachmentsTaken(client: RouterClient, env: NodeJS.ProcessEnv, apiRoot: string | undefined, model: string | undefined, attachments: readonly Attachment[]): Promise<void> {
  if (!model || !attachments.length) return;
  const [{ modelCatalog, modalities }, { DEFAULT_API_ROOT }] = await Promise.all([import('./model-catalog.js'), import('../../client/core.js')]);
  const listed = (await modelCatalog(client, { env, apiRoot: apiRoot ?? DEFAULT_API_ROOT, signal: AbortSignal.timeout(3000) }).catch(() => undefined))?.find((m) => m.id === model);
  if (!listed) return;
  const takes = modalities(listed).input;
  if (!takes.length) return;
  const refused = attachments.find((a) => !takes.includes(a.kind));
  if (!refused) return;
  const name = refused.source === '-' ? '-' : refused.source;
  const wayOut = isTextFile(refused) && refused.source !== '-' ? `-f ${name} puts a text file in the prompt` : isTextFile(refused) ? 'give the text as the prompt (echo … | router chat)' : `models that do: router models --input-modality ${refused.kind}`;
  throw usage(`--attach ${name}: ${model} takes ${takes.join(', ')} input, not ${refused.kind === 'file' ? `a file (${refused.mediaType})` : refused.kind}; ${wayOut}; nothing was sent`);
}
