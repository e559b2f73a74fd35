import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll } from 'vitest';
import { startTarget, type Target, type TargetKind } from './client-targets.js';

/** A target's root as @anthropic-ai/sdk takes it: the SDK adds /v1/messages itself (and sends the key as `x-api-key`). */
export const anthropicRoot = (t: Target) => t.baseURL.replace(/\/v1$/, '');

/** Starts `kind` for the describe block it is called in and hands over it and an SDK client on it; closed after the block. */
export function anthropicPerTarget(kind: TargetKind, got: (t: Target, client: Anthropic) => void): void {
  let target: Target | undefined;
  beforeAll(async () => {
    target = await startTarget(kind);
    got(target, new Anthropic({ apiKey: target.apiKey, baseURL: anthropicRoot(target), maxRetries: 0 }));
  });
  afterAll(async () => {
    await target?.close();
  });
}
