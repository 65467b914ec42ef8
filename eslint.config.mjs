// Lint rules and the import boundaries, enforced per folder (docs/decisions/0003-eslint-boundaries.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readdirSync } from 'node:fs';

const nodeBuiltins = ['node:*', 'fs', 'path', 'os', 'child_process', 'net', 'http', 'crypto', 'url', 'events'];
/** What the platform-free protocol files and the webview (which imports them) must never pull in. */
const hostAndStore = ['vscode', 'ws', 'pg', '@electric-sql/*', 'drizzle-orm', 'drizzle-orm/*', ...nodeBuiltins];

/**
 * The core folders every face may import whole (docs/architecture.md): protocol/ (the schemas, the
 * client, the frame size rule), rules/ (the state machine and the derived rules: lease expired, health
 * and stalled, claimable, Done pages, so no face re-writes them) and scope/ (the one scope module).
 * All are platform-free (webview/tsconfig.json compiles them without node types); rules/
 * and scope/ are zod-free too (types only from protocol/).
 */
const sharedFolders = ['protocol', 'rules', 'scope'];
/**
 * core/'s root files: the few cross-cutting ones (errors, clock, backoff, duration, ids, log, paths,
 * plural), read from the folder so a new one needs no entry here. Faces may import them; the node-only
 * ones (log, paths, ids) fail the webview's compile, which has no node types.
 */
const coreRoot = readdirSync(new URL('./core', import.meta.url))
	.filter(f => f.endsWith('.ts'))
	.map(f => f.slice(0, -3));
const protocolValues = ['zod', './protocol', './protocol/*', '../protocol', '../protocol/*'];

/** drizzle-kit is a devDependency: test/core/schema.test.ts has it render core/store/schema.ts as DDL. */
const devOnly = { group: ['drizzle-kit', 'drizzle-kit/*'], message: 'drizzle-kit is for the schema test only.' };
/**
 * drizzle-orm runs in the store's cold paths only (docs/decisions/0045-drizzle.md; core/store/orm.ts over the store's own
 * connection, used by core/backlog/); everything else talks to the Backlog (docs/architecture.md, the store).
 */
const storeOnly = {
	group: ['drizzle-orm', 'drizzle-orm/*', '**/store/schema*', '**/store/orm'],
	message:
		'drizzle-orm, core/store/schema*.ts and orm.ts run only in core/store/ and core/backlog/: the rest goes through the Backlog.',
};

const restrict = (patterns, message, more = []) => ({
	'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }, ...more] }],
});

const coreBoundary = [
	'vscode',
	'../mcp-server/*',
	'../extension/*',
	'../webview/*',
	'**/mcp-server/**',
	'**/extension/**',
	'**/webview/**',
];
const coreBoundaryMessage = 'core/ imports nothing of ours but core/, never vscode.';

export default tseslint.config(
	{ ignores: ['node_modules/', 'dist/', '.vscode-test/', '.baton/', '**/*.mjs', '**/*.js', 'core/store/migrations/'] },
	js.configs.recommended,
	...tseslint.configs.strictTypeChecked,
	...tseslint.configs.stylisticTypeChecked,
	{
		languageOptions: {
			parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
		},
		rules: {
			curly: 'error',
			eqeqeq: ['error', 'always', { null: 'ignore' }],
			'@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
			'@typescript-eslint/no-floating-promises': 'error',
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
			'@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
			'@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
			'@typescript-eslint/no-confusing-void-expression': 'off',
			'@typescript-eslint/no-extraneous-class': 'off',
			'@typescript-eslint/consistent-type-definitions': 'off',
		},
	},
	{
		files: ['core/**/*.ts'],
		rules: restrict(coreBoundary, coreBoundaryMessage, [devOnly, storeOnly]),
	},
	{
		files: ['core/store/**/*.ts', 'core/backlog/**/*.ts'],
		rules: restrict(coreBoundary, coreBoundaryMessage, [devOnly]),
	},
	{
		files: sharedFolders.map(d => `core/${d}/**/*.ts`),
		rules: restrict(
			[...hostAndStore, '../*', ...sharedFolders.map(d => `!../${d}`), ...coreRoot.map(f => `!../${f}`)],
			`core/{${sharedFolders.join(',')}}/ are platform-free and import only each other and core/'s root files: every face imports them (docs/architecture.md).`,
		),
	},
	{
		files: ['core/*.ts'],
		rules: restrict(
			['./*', ...sharedFolders.map(d => `!./${d}`), ...coreRoot.map(f => `!./${f}`)],
			`core/'s root files are cross-cutting: they import only each other and core/{${sharedFolders.join(',')}}/ (docs/architecture.md).`,
		),
	},
	{
		files: ['core/*.ts', 'core/rules/**/*.ts', 'core/scope/**/*.ts'],
		rules: {
			'@typescript-eslint/no-restricted-imports': [
				'error',
				{
					patterns: [
						{
							group: protocolValues,
							allowTypeImports: true,
							message:
								"The derived rules and core/'s root files are zod-free: import only types from core/protocol/, so the board and activation never load zod for a rule.",
						},
					],
				},
			],
		},
	},
	{
		files: ['webview/**/*.ts'],
		rules: restrict(
			[
				...hostAndStore,
				'../core/*',
				...sharedFolders.map(d => `!../core/${d}`),
				...coreRoot.map(f => `!../core/${f}`),
				'../extension/*',
				'../mcp-server/*',
			],
			`webview/ may import only core/{${sharedFolders.join(',')}}/ and core/'s root files (docs/architecture.md).`,
		),
	},
	{
		files: ['extension/**/*.ts'],
		rules: restrict(
			[
				'@electric-sql/*',
				'drizzle-orm',
				'drizzle-orm/*',
				'pg',
				'../core/store/*',
				'../core/backlog',
				'../core/backlog/*',
				'../mcp-server/*',
				'../webview/*',
			],
			'The extension never loads PGlite or the store: it is a client of the hub.',
		),
	},
	{
		files: ['mcp-server/**/*.ts'],
		rules: restrict(
			['vscode', '../extension/*', '../webview/*'],
			'mcp-server/ imports core/ only; no face imports another face.',
			[devOnly, storeOnly],
		),
	},
	{
		files: ['test/**/*.ts'],
		rules: {
			'@typescript-eslint/no-non-null-assertion': 'off',
			'@typescript-eslint/no-floating-promises': [
				'error',
				{
					allowForKnownSafeCalls: [
						{ from: 'package', name: ['describe', 'it', 'suite', 'test'], package: 'node:test' },
					],
				},
			],
		},
	},
);
