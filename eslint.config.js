// Lint rules that catch real defects, and sorted imports; the layout of the code is Prettier's
// (.prettierrc.json), checked by `npm run lint` beside these rules.
import js from '@eslint/js';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', '.bench-build/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['test/bench/**', 'test/support/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The CLI prints through its run's io (src/cli/io.ts), so that runCli runs in process.
    files: ['src/cli/**'],
    rules: { 'no-console': 'error' },
  },
  {
    // The gateway knows v3 only through HTTP: it may never import the core.
    files: ['src/gateway/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/core/**', '../core/*'], message: 'The gateway talks to v3 over HTTP only.' }] },
      ],
    },
  },
  {
    // The core is the v3 service: it knows nothing of the legacy generations or of how it is started.
    files: ['src/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/gateway/**', '**/cli/**', '**/mappings/**'],
              message: 'The core depends on lib only; the gateway and the CLI depend on it.',
            },
          ],
        },
      ],
    },
  },
  {
    // The domain is not the web layer: the HTTP pipeline and the routes call it, never the reverse.
    files: ['src/core/trading/**', 'src/core/money-movement/**', 'src/core/ledger/**', 'src/core/events/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/gateway/**', '**/cli/**', '**/mappings/**'],
              message: 'The core depends on lib only; the gateway and the CLI depend on it.',
            },
            {
              group: ['**/http/**', '**/routes/**', 'fastify'],
              message:
                'The domain takes what it needs from src/core/*.ts (principal, idempotent rows, wire types), not from the HTTP layer.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/lib/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/core/**', '**/gateway/**', '**/cli/**'],
              message: 'Library code is shared; it depends on no part.',
            },
          ],
        },
      ],
    },
  },
);
