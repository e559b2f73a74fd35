/** An upstream's body read within bounds: a provider that sends without end cannot fill the gateway's memory. */

/** Default of `max_answer_mb`: the largest whole answer (or one stream event) taken from a provider. */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** The first `max` bytes of a body as text (a refusal's words), the rest let go; '' when it cannot be read. */
export async function headText(body: AsyncIterable<Buffer>, max = 4096): Promise<string> {
  const pieces: Buffer[] = [];
  let size = 0;
  try {
    for await (const piece of body) {
      pieces.push(piece);
      size += piece.length;
      if (size >= max) break;
    }
  } catch {
    // what came before the break is kept
  }
  return Buffer.concat(pieces).toString('utf8').slice(0, max);
}

export const mib = (bytes: number) => `${Math.round((bytes / 2 ** 20) * 10) / 10} MiB`;
