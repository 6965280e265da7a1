// ESLint (flat config): typescript-eslint's recommended and type-checked rules, with Prettier owning layout.
// Run with `npm run lint` (CI runs it before the tests).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      'libs/client/src/openapi-types.ts',
      'dist/**',
      'libs/client/dist/**',
      'node_modules/**',
      'coverage/**',
      '.tmp/**',
      'data/**',
      'replay-report/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Intentional: the control characters are what these patterns look for (NUL, C0 controls in ids and texts).
      'no-control-regex': 'off',
      // Handlers implement async interfaces (Nest's ICommandHandler, the event store port) with synchronous bodies.
      '@typescript-eslint/require-await': 'off',
      // Adapters pass caught errors on as they are (`catch (error)` is unknown); what they catch is an Error.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read untyped HTTP answers (supertest's `body` is `any`) and JSON fixtures: asserting on
    // them is the point, so the no-unsafe-* family is off there (and in the replay command, which reads the
    // service's JSON the same way); everything else still applies.
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.slow-spec.ts', 'test/**/*.ts', 'apps/replay/**/*.ts', 'bench/**/*.ts', 'libs/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  prettier,
);
