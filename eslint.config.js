// ESLint for the whole repository (`make lint`). Type-aware: the typescript-eslint rules that
// read types (no-floating-promises, no-misused-promises, await-thenable, …) are the ones that
// catch real defects in an async Kubernetes controller; a full run takes ~30 s on 2 cores.
// Every rule turned off below says why; formatting is prettier's job (.prettierrc), not ESLint's.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'out/', 'bench/out/', '.plugflow/', 'emissary/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Chosen on top of the recommended sets: each names a defect class seen in Node/TS code.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-prototype-builtins': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // `_name` is how the code drops a field from a destructured object or an unused parameter.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // prom-client calls a gauge's collect() with `this` bound to the gauge, so the metrics
      // classes keep their own `this` as `self`.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
      // API records are `interface Template extends RecordOf<typeof TEMPLATE_RECORD.fields> {}`
      // (src/api/record-declaration.ts): the interface gives the derived type its name in hovers
      // and errors, and lets mutually recursive records (a step's inline Template) resolve.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],

      // Off, with reasons:
      // `any` enters where JSON/YAML is parsed and from commander's option bags. Of the ~400 sites
      // these flag, ~370 are tests reading parsed fixtures; the ~35 in src/ read values right
      // after a runtime type check (`typeof p?.name === 'string'`, Array.isArray): no defect.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // Harmless (`x as number` after a check TS already narrowed); 222 sites, no defect.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Async functions without await implement async interfaces (fastify plugins, test stubs).
      '@typescript-eslint/require-await': 'off',
      // Messages are built from unknown values on purpose (errorMessage, String(x)); the defect
      // these aim at ("[object Object]" in a message) was not found among their 12 sites.
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      // Wrapping errors names the object and field in the new message and includes the cause's
      // text (errorMessage); `cause` would add nothing users see.
      'preserve-caught-error': 'off',
      // Context callbacks are closures declared in method syntax on interfaces; nothing binds `this`.
      '@typescript-eslint/unbound-method': 'off',
      // Only rethrows of caught values are flagged (stored, then thrown after Promise.all).
      '@typescript-eslint/only-throw-error': 'off',
      // The control-character regexes match control characters on purpose (to escape or refuse them).
      'no-control-regex': 'off',
    },
  },
  {
    // One reader of user YAML (src/yaml/kube-yaml.ts: what kubectl accepts, as it reads it); the
    // yaml package only writes YAML.
    files: ['src/**/*.ts', 'src/**/*.tsx', 'ui/src/**/*.ts', 'ui/src/**/*.tsx'],
    ignores: ['**/*.test.ts', 'src/yaml/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'yaml',
              importNames: ['parse', 'parseDocument', 'parseAllDocuments', 'Parser', 'Composer', 'Lexer', 'Document'],
              message: 'read user YAML with src/yaml/kube-yaml.ts (the one reader); the yaml package only writes',
            },
            { name: 'js-yaml', message: 'read user YAML with src/yaml/kube-yaml.ts (the one reader)' },
          ],
        },
      ],
    },
  },
  {
    // Tests and fixtures read parsed JSON and YAML of arbitrary shape.
    files: ['**/*.test.ts', 'test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', queueMicrotask: 'readonly' } },
  },
  {
    // CommonJS configuration (dependency-cruiser reads its config with require).
    files: ['**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
