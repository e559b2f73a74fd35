import { expect, it } from 'vitest';
import { readTrace, traceProblems } from '../conformance/trace.js';

it('every rule in the trace table of docs/conformance.md has a test, and the table names where', () => {
  expect(readTrace().rows.length).toBeGreaterThan(90);
  expect(traceProblems()).toEqual([]);
});
