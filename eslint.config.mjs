// ESLint flat config: typescript-eslint's recommended rules, plus the module-boundary rule
// that libs are imported only through their index (`@app/<lib>`), never by deep path.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'libs/*/dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@app/*/*'], message: 'Import a lib only through its index: @app/<lib>.' },
            { group: ['**/libs/*/src/*', '../libs/**', '../../libs/**', '../../../libs/**'], message: 'Import a lib only through @app/<lib>.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
