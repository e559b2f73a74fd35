// npm run lint: typescript-eslint's recommended rules over src, test, bench, scripts and bin.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // The programs tests write into the package's folder for a moment (so that its name resolves to itself).
  { ignores: ['dist/', 'node_modules/', 'completions/', 'coverage/', '.library-*', '.docs-example-*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', fetch: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', queueMicrotask: 'readonly', performance: 'readonly', structuredClone: 'readonly', WebAssembly: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', __filename: 'readonly', exports: 'writable' },
    },
    rules: {
      // Terminal text is escaped on purpose: control characters are what those patterns look for.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // The launcher is CommonJS (bin/router.cjs).
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests read loosely typed JSON answers.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // vi.waitFor gives up after 1 s unless told: a loaded machine takes longer to write a file or hear a hang-up.
      'no-restricted-syntax': ['error', { selector: "CallExpression[callee.object.name='vi'][callee.property.name='waitFor'][arguments.length<2]", message: 'vi.waitFor gives up after 1 s by default: pass a bound for a loaded machine (SETTLE from test/support/until.ts)' }],
    },
  },
);
