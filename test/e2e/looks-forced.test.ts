import { sweep } from '../support/looks-sweep.js';

// The CLI's looks (test/support/looks-sweep.ts): every command's --help and examples piped with FORCE_COLOR=0 and FORCE_COLOR=1.
sweep(['forceOff', 'forceOn']);
