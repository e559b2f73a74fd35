import { sweep } from '../support/looks-sweep.js';

// The CLI's looks (test/support/looks-sweep.ts): every command's --help and examples on a terminal of 80 columns (NO_COLOR=1) and of 40 (TERM=dumb).
sweep(['terminal80', 'terminal40']);
