// Lint rules and the import boundaries of DESIGN §6 / STYLE §2.2, enforced per folder.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['node:*', 'fs', 'path', 'os', 'child_process', 'net', 'http', 'crypto', 'url', 'events'];
/** What the platform-free protocol files and the webview (which imports them) must never pull in. */
const hostAndStore = ['vscode', 'ws', 'pg', '@electric-sql/*', 'drizzle-orm', 'drizzle-orm/*', ...nodeBuiltins];

/**
 * The core files every face may import (docs/architecture.md): the protocol and its client, the
 * derived rules (lease expired, health and stalled, claimable) so no face re-writes them, and the
 * clock and the retry policy every connection shares. All are platform-free; the rule modules are
 * zod-free too (types only from core/protocol/index.ts).
 */
const sharedCore = [
	'protocol',
	// The parts core/protocol/index.ts re-exports (faces import core/protocol/index.ts itself).
	'protocolDomain',
	'protocolCards',
	'protocolMethods',
	'protocolFrames',
	// Issue 33: card/diff's schemas, which the methods table imports.
	'protocolDiff',
	'rpc',
	'rpcFeed',
	'frameSize',
	'errors',
	'clock',
	'backoff',
	'duration',
	'lease',
	'health',
	'claimable',
	// Issue 14: the board and the tree page Done the same way (where the loaded pages end, the counts).
	'donePages',
];
const ruleModules = ['errors', 'clock', 'backoff', 'duration', 'lease', 'health', 'claimable', 'donePages'];

/**
 * Core folders every face may import whole, under the same rules as sharedCore (platform-free,
 * zod-free): scope/ is the one scope module (issue 29 §1), so the hub, the board and the tree decide
 * "waits on files held by …" the same way.
 */
const sharedFolders = ['scope'];

/** drizzle-kit is a devDependency: test/core/schema.test.ts has it render core/store/schema.ts as DDL. */
const devOnly = { group: ['drizzle-kit', 'drizzle-kit/*'], message: 'drizzle-kit is for the schema test only.' };
/**
 * drizzle-orm runs in the store's cold paths only (issue 29 §4: core/store/orm.ts over the store's own
 * connection, used by core/backlog/); everything else talks to the Backlog (docs/architecture.md, the store).
 */
const storeOnly = {
	group: ['drizzle-orm', 'drizzle-orm/*', '**/store/schema', '**/store/orm'],
	message:
		'drizzle-orm, core/store/schema.ts and orm.ts run only in core/store/ and core/backlog/: the rest goes through the Backlog.',
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
const coreBoundaryMessage = 'core/ imports nothing of ours but core/, never vscode (DESIGN §6).';

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
		files: sharedCore.map(f => `core/${f}.ts`),
		rules: restrict(
			[...hostAndStore, '../*', './*', ...sharedCore.map(f => `!./${f}`)],
			`core/{${sharedCore.join(',')}}.ts are platform-free and import only each other: every face imports them (docs/architecture.md).`,
		),
	},
	{
		files: sharedFolders.map(d => `core/${d}/*.ts`),
		rules: restrict(
			[...hostAndStore, '../*', ...sharedCore.map(f => `!../${f}`)],
			`core/{${sharedFolders.join(',')}}/ is platform-free and imports only itself and core/{${sharedCore.join(',')}}.ts: every face imports it (docs/architecture.md).`,
		),
	},
	{
		files: [...ruleModules.map(f => `core/${f}.ts`), ...sharedFolders.map(d => `core/${d}/*.ts`)],
		rules: {
			'@typescript-eslint/no-restricted-imports': [
				'error',
				{
					patterns: [
						{
							group: ['zod', './protocol', './protocol?*', '../protocol', '../protocol?*'],
							allowTypeImports: true,
							message:
								'The derived rules are zod-free: import only types from core/protocol/index.ts, so the board and activation never load zod for a rule.',
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
				...sharedCore.map(f => `!../core/${f}`),
				...sharedFolders.map(d => `!../core/${d}`),
				'../extension/*',
				'../mcp-server/*',
			],
			`webview/ may import only core/{${sharedCore.join(',')}}.ts and core/{${sharedFolders.join(',')}}/ (docs/architecture.md).`,
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
			'The extension never loads PGlite or the store: it is a client of the hub (DESIGN §1).',
		),
	},
	{
		files: ['mcp-server/**/*.ts'],
		rules: restrict(
			['vscode', '../extension/*', '../webview/*'],
			'mcp-server/ imports core/ only; no face imports another face (DESIGN §6).',
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
