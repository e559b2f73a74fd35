import { sweep } from '../support/looks-sweep.js';

// The CLI's looks (test/support/looks-sweep.ts): every command's --help and examples piped, as is and with TERM=dumb or NO_COLOR=1.
sweep(['piped', 'dumb', 'noColor']);
