/** `-a/--attach PATH|URL|-`: files, stdin or URLs read as the CLI reads input, made into attachments by src/kit. */
import { collectBounded } from '../io/bounded-read.js';
import { usage } from '../exit-codes.js';
import { readFileFor, takeStdin } from '../io/input.js';
import type { IO } from '../io/io.js';
import { attachmentFromBytes, attachmentFromUrl, isAttachmentUrl, MAX_ATTACHMENT_BYTES, tooLargeAttachment, type Attachment } from '../../kit/attachments.js';

export { MAX_ATTACHMENT_BYTES, sniff, chatParts, responsesParts, attachmentReference, type Attachment, type AttachmentKind } from '../../kit/attachments.js';

/** Reads every attachment before anything is sent: a missing file, an unknown type or one too large is one line, exit 2. */
export async function readAttachments(sources: string[] | undefined, io: IO): Promise<Attachment[]> {
  const out: Attachment[] = [];
  for (const source of sources ?? []) {
    if (isAttachmentUrl(source)) {
      out.push(attachmentFromUrl(source));
      continue;
    }
    if (source === '-' && sources!.filter((s) => s === '-').length > 1) throw usage('--attach -: stdin can be attached once');
    if (source === '-') takeStdin(io, '--attach -');
    // A file too large is refused by its size, unread; a pipe or a device (/dev/zero) once it has sent that much.
    const limit = { max: MAX_ATTACHMENT_BYTES, tooMuch: () => tooLargeAttachment(source) };
    const data = source === '-' ? await collectBounded(io.stdin, '--attach -', io.interrupt, limit.max, limit.tooMuch) : await readFileFor('--attach', source, io.interrupt, limit);
    out.push(await attachmentFromBytes(data, { source }));
  }
  return out;
}
