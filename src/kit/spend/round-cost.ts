// One helper for every layer: it lives in internal/ (batch may not import kit).
export { roundCost } from '../../internal/round-cost.js';
