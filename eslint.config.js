import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import fences from './eslint-rules/fences.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'charts/**', 'crds/**', '.svc-dev/**', 'bench/.work/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    plugins: { svc: fences },
    rules: {
      'svc/fences': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // the dashboard runs in the browser
  { files: ['web/src/**'], languageOptions: { globals: { ...globals.browser } } },
);
