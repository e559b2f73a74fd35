/**
 * A kept conversation's attachments, sent again when it is taken up (-c, --conversation, chat -i),
 * as llm -c does. The conversation keeps each by reference (./attach.ts: attachmentReference): a
 * file still there with the same hash goes again as it went the first time; any other is said by
 * name only, for the folders of this machine are no business of the service's.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { ChatMessage } from '../client/types.js';
import { MAX_ATTACHMENT_BYTES, type Attachment } from './attach.js';
import { userContent } from './request-extras.js';

const REFERENCE = /^\[attachment: (.+) \(([\w.+-]+\/[\w.+*-]+), (\d+) bytes, sha256:([0-9a-f]{64})\)\]$/;

/**
 * The messages as they go out again: a user message with references, its attachments back where they
 * are unchanged; other messages as they are. `sentAs` learns each message made anew and what it was.
 */
export async function withAttachmentsAgain(history: ChatMessage[], sentAs: (sent: ChatMessage, kept: ChatMessage) => void): Promise<ChatMessage[]> {
  return Promise.all(
    history.map(async (m) => {
      if (m.role !== 'user' || typeof m.content !== 'string' || !m.content.includes('[attachment: ')) return m;
      const text: string[] = [];
      const attachments: Attachment[] = [];
      for (const line of m.content.split('\n')) {
        const ref = REFERENCE.exec(line);
        if (!ref) text.push(line);
        else {
          const again = await readAgain(ref[1]!, ref[2]!, Number(ref[3]), ref[4]!);
          if (again) attachments.push(again);
          else text.push(`[attachment: ${basename(ref[1]!)} (${ref[2]}, ${ref[3]} bytes), no longer at hand]`);
        }
      }
      const sent: ChatMessage = { role: 'user', content: userContent(text.join('\n'), { attachments }, 'chat') as ChatMessage['content'] };
      sentAs(sent, m);
      return sent;
    }),
  );
}

/** The file of a reference, when it is still there with the same bytes. */
async function readAgain(path: string, mediaType: string, bytes: number, sha256: string): Promise<Attachment | undefined> {
  if (!path.startsWith('/') || bytes > MAX_ATTACHMENT_BYTES) return undefined;
  try {
    // node:fs as the one-shot chat has it loaded (fs/promises would cost every start); at most 20 MiB.
    if (statSync(path).size !== bytes) return undefined;
    const data = readFileSync(path);
    const { createHash } = await import('node:crypto');
    if (createHash('sha256').update(data).digest('hex') !== sha256) return undefined;
    const kind = mediaType.startsWith('image/') ? 'image' : mediaType.startsWith('audio/') ? 'audio' : 'file';
    return { source: path, kind, mediaType, filename: basename(path), data, sha256 };
  } catch {
    return undefined;
  }
}
