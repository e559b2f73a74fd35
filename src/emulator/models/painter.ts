import { encodePng } from './png.js';
import { prng, seedOf } from './models.js';

const SIZE = 64;

/** What `local/painter` answers: a short text and a real PNG drawn from the prompt (a disc on a background, colours from its words). */
export function paint(prompt: string): { content: string; images: { type: 'image_url'; image_url: { url: string } }[] } {
  const rand = prng(seedOf('painter', prompt));
  const colour = (): [number, number, number] => [Math.floor(rand() * 256), Math.floor(rand() * 256), Math.floor(rand() * 256)];
  const background = colour();
  const disc = colour();
  const radius = 12 + rand() * 16;
  const png = encodePng(SIZE, SIZE, (x, y) => ((x - SIZE / 2) ** 2 + (y - SIZE / 2) ** 2 <= radius ** 2 ? disc : background));
  const subject = prompt.trim().slice(0, 200) || 'an empty prompt';
  return {
    content: `Here is an image of ${subject}.`,
    images: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }],
  };
}
