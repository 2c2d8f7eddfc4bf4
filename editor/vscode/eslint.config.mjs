// Lint of the extension's TypeScript: the recommended rules with type information, which
// catch what matters in an extension host (promises nobody awaits, unsafe `any` from the wire).
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
    { ignores: ['out/', 'node_modules/', '*.vsix'] },
    eslint.configs.recommended,
    tseslint.configs.recommendedTypeChecked,
    {
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
        },
        rules: {
            // node:test's test() returns a promise the runner itself awaits.
            '@typescript-eslint/no-floating-promises': ['error', {
                allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it'] }],
            }],
            '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
            eqeqeq: 'error',
        },
    },
    { files: ['**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
);
