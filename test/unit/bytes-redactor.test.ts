import { expect, it } from 'vitest';
import { BytesRedactor, redactBytes } from '../../src/internal/redact-bytes.js';

const SECRETS = ['sk-or-v1-first-0123456789', 'sk-short-9'];
const TEXT = Buffer.from('a sk-or-v1-first-0123456789 b sk-short-9sk-short-9 c sk-or-v1-first-012345678 d');

it('a body read in pieces cut anywhere is redacted as the whole would be', () => {
  const whole = redactBytes(TEXT, SECRETS);
  expect(whole.toString()).toBe('a **** b ******** c sk-or-v1-first-012345678 d');
  for (let a = 0; a <= TEXT.length; a++) {
    for (let b = a; b <= TEXT.length; b += 3) {
      const r = new BytesRedactor(SECRETS);
      const shown = Buffer.concat([r.push(TEXT.subarray(0, a)), r.push(TEXT.subarray(a, b)), r.push(TEXT.subarray(b)), r.end()]);
      expect(shown.toString(), `cut at ${a} and ${b}`).toBe(whole.toString());
    }
  }
});

it('a piece at a time, one byte each: the key never goes out', () => {
  const r = new BytesRedactor(SECRETS);
  const shown = Buffer.concat([...[...TEXT].map((byte) => r.push(Buffer.from([byte]))), r.end()]);
  expect(shown.toString()).toBe(redactBytes(TEXT, SECRETS).toString());
});
