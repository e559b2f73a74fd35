import { describe, expect, it } from 'vitest';
import { BATCH_PRICE, callBound, completionWithin, countImages, promptTokenBound, readPricing, usd, usdBound, worstBound, type Pricing } from '../../src/kit/spend/cost-bound.js';

const cheap: Pricing = { model: 'a/cheap', prompt: 1e-6, completion: 2e-6, image: 0, request: 0, maxCompletion: 1000 };
const dear: Pricing = { model: 'a/dear', prompt: 1e-5, completion: 3e-5, image: 0.01, request: 0.002 };

describe('readPricing', () => {
  it('reads the list\'s price strings, and the completion limit of the top provider before the context length', () => {
    const p = readPricing({ id: 'x/y', pricing: { prompt: '0.000001', completion: '0.000002', image: '0.01', request: '0.5' }, context_length: 8192, top_provider: { max_completion_tokens: 4096 } });
    expect(p).toEqual({ model: 'x/y', prompt: 1e-6, completion: 2e-6, image: 0.01, request: 0.5, maxCompletion: 4096 });
    expect(readPricing({ id: 'x/y', pricing: { prompt: '0', completion: '0' }, context_length: 8192 })).toMatchObject({ image: 0, request: 0, maxCompletion: 8192 });
  });

  it('prices each side at its dearest key: cache writes, audio, reasoning, and any conditional override', () => {
    const p = readPricing({
      id: 'x/y',
      pricing: { prompt: '0.000001', completion: '0.000002', input_cache_write: '0.00000125', internal_reasoning: '0.000003', input_cache_read: '0.0000001', overrides: [{ min_prompt_tokens: 200000, prompt: '0.000004' }] },
    });
    expect(p).toMatchObject({ prompt: 4e-6, completion: 3e-6, image: 0, request: 0 });
    expect(readPricing({ id: 'x/y', pricing: { prompt: '0.1', completion: '0.1', audio: '-1' } })).toMatch(/audio price of x\/y is not a price/);
  });

  it('says why pricing cannot be read rather than guessing', () => {
    expect(readPricing({ id: 'x/y' })).toMatch(/no pricing for x\/y/);
    expect(readPricing({ id: 'x/y', pricing: { prompt: '0.1' } })).toMatch(/no prompt or completion price/);
    expect(readPricing({ id: 'x/auto', pricing: { prompt: '-1', completion: '-1' } })).toMatch(/prompt price of x\/auto is not a price \("-1"\)/);
    expect(readPricing({ id: 'x/y', pricing: { prompt: 'free', completion: '0' } })).toMatch(/not a price/);
  });
});

describe('the bound of one call', () => {
  it('is prompt + images + request + the completion limit at the completion price', () => {
    expect(callBound(dear, { promptTokens: 100, images: 2, completionTokens: 50 })).toBeCloseTo(100 * 1e-5 + 2 * 0.01 + 0.002 + 50 * 3e-5, 12);
  });

  it('takes the model\'s own limit when the call gives none, and is unbounded when neither does', () => {
    expect(callBound(cheap, { promptTokens: 10, images: 0 })).toBeCloseTo(10 * 1e-6 + 1000 * 2e-6, 12);
    expect(callBound(cheap, { promptTokens: 10, images: 0, completionTokens: 5000 })).toBeCloseTo(10 * 1e-6 + 1000 * 2e-6, 12);
    expect(callBound(dear, { promptTokens: 10, images: 0 })).toBe(Infinity);
    expect(callBound({ ...dear, completion: 0 }, { promptTokens: 10, images: 0 })).toBeCloseTo(10 * 1e-5 + 0.002, 12);
  });

  it('pays the request price once per request sent', () => {
    expect(callBound(dear, { promptTokens: 0, images: 0, completionTokens: 0, requests: 3 })).toBeCloseTo(0.006, 12);
  });

  it('with fallback models is the most expensive of them', () => {
    const size = { promptTokens: 100, images: 1, completionTokens: 100 };
    expect(worstBound([cheap, dear], size)).toEqual({ model: 'a/dear', bound: callBound(dear, size) });
    expect(worstBound([dear, cheap], size).model).toBe('a/dear');
  });

  it('counts image parts of chat and Responses at any depth', () => {
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'data:' } }] }], input: [{ content: [{ type: 'input_image', image_url: 'u' }] }] };
    expect(countImages(body)).toBe(2);
    expect(callBound(dear, { promptTokens: 0, images: countImages(body), completionTokens: 0 })).toBeCloseTo(0.022, 12);
  });

  it('bounds prompt tokens by the body\'s UTF-8 bytes, never fewer than its characters', () => {
    const body = { messages: [{ role: 'user', content: 'héllo wörld ✓' }] };
    expect(promptTokenBound(body)).toBe(Buffer.byteLength(JSON.stringify(body)));
    expect(promptTokenBound(body)).toBeGreaterThan('héllo wörld ✓'.length);
  });
});

describe('completion tokens within a cap', () => {
  it('is what the cap leaves after the fixed cost, for the dearest model', () => {
    const size = { promptTokens: 100, images: 0 };
    // cheap leaves (0.01 - 1e-4) / 2e-6 = 4950, dear (0.01 - 1e-3 - 0.002) / 3e-5 = 233.33
    expect(completionWithin([cheap], size, 0.01)).toBe(4950);
    expect(completionWithin([cheap, dear], size, 0.01)).toBe(233);
    const at = completionWithin([cheap, dear], size, 0.01);
    expect(worstBound([cheap, dear], { ...size, completionTokens: at }).bound).toBeLessThanOrEqual(0.01);
    expect(worstBound([cheap, dear], { ...size, completionTokens: at + 1 }).bound).toBeGreaterThan(0.01);
  });

  it('is 0 when the prompt alone passes the cap, Infinity when completions are free', () => {
    expect(completionWithin([dear], { promptTokens: 1000, images: 0 }, 0.001)).toBe(0);
    expect(completionWithin([{ ...cheap, completion: 0 }], { promptTokens: 1, images: 0 }, 1)).toBe(Infinity);
  });
});

describe('amounts', () => {
  it('batches are charged at half price', () => expect(BATCH_PRICE).toBe(0.5));
  it('shows small amounts to their digits', () => {
    // By the rule of costs: six decimals at least, ten at most ($0.0012346, not $0.001235).
    expect(usd(0.0012346)).toBe('$0.0012346');
    expect(usd(0.00029995000001)).toBe('$0.00029995');
    expect(usdBound(0.0012341)).toBe('$0.001235');
    expect(usdBound(0.001)).toBe('$0.001000');
    expect(usd(2e-8)).toBe('$0.00000002');
    expect(usd(Infinity)).toBe('unbounded');
  });
});

describe('prices beyond tokens: web searches, image tokens, images of the answer', () => {
  const pricing = { prompt: '0.000001', completion: '0.000002', web_search: '0.02', image_output: '0.04', image_token: '0.00003' };

  it('reads them: an image token bounds either side at its price, a web search is paid per request that searches', async () => {
    const { searchesOf } = await import('../../src/kit/spend/cost-bound.js');
    const p = readPricing({ id: 'x/img', pricing, context_length: 1000 }) as Pricing;
    expect(p).toMatchObject({ prompt: 3e-5, completion: 3e-5, webSearch: 0.02, imageOutput: 0.04 });
    expect(searchesOf({ plugins: [{ id: 'web' }] })).toBe(1);
    expect(searchesOf({ model: 'x/y:online' })).toBe(1);
    expect(searchesOf({ model: 'x/y', plugins: [{ id: 'file-parser' }] })).toBe(0);
    expect(callBound(p, { promptTokens: 10, images: 0, completionTokens: 10, searches: 1 })).toBeCloseTo(20 * 3e-5 + 0.02, 12);
  });

  it('a call asking for images of a model that prices each one cannot be bounded', async () => {
    const { imagesUnbounded } = await import('../../src/kit/spend/cost-bound.js');
    const p = readPricing({ id: 'x/img', pricing }) as Pricing;
    expect(imagesUnbounded({ modalities: ['text', 'image'] }, [cheap, p])).toBe('x/img charges $0.040000 per image of its answer, and nothing limits how many an answer holds');
    expect(imagesUnbounded({ modalities: ['text'] }, [p])).toBeUndefined();
    expect(imagesUnbounded({ modalities: ['image'] }, [cheap])).toBeUndefined();
  });
});
