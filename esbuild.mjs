// Bundles the three faces: dist/extension.js (cjs, `vscode` external, small, no PGlite),
// the `baton` program (dist/baton.js picks dist/mcp.js for `baton mcp`, else dist/program.js: hub +
// CLI, carries PGlite) and dist/webview/board.js (browser iife).
// PGlite's WASM and data files are copied to dist/pglite/ and loaded explicitly, because esbuild
// does not follow `new URL('./file', import.meta.url)` (PGlite's bundler-support docs).
import * as esbuild from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
/**
 * Bundles that load on every activation or board open must stay small: the extension only talks to
 * the hub, and the board is parsed each time a webview or tab opens it (598 KB minified while zod's
 * locales were in it, 337 KB without). Projects and scopes raised both from 500 to 520 KB: in the extension the
 * held-file decorations, the project switch and the scope rules (then core/scopeMatch.ts + globOverlap.ts, now core/scope/)
 * added 20.0 KB to 497.6 KB; in the board the project choice, the scope chip and "waits on files
 * held by …" (the same core rules, braces excluded) added 10.7 KB to 501.9 KB. `baton init` raised the
 * extension's to 560 KB: the MCP config merge shared with `baton init` (core/formats/mcpConfig.ts) and
 * jsonc-parser, which keeps the comments of `.vscode/mcp.json` (29 KB of it), brought it to 546.8 KB.
 * The board's first-use work raised its budget to 528 KB: its first use (loading and empty states, the offline header,
 * project and scope in the card form, done results as markdown) and the one scope module it now shares
 * with the hub brought it to 524.8 KB. Workspaces raised the board's to 548 KB and the extension's to
 * 568 KB: a card's diff on the board (jsdiff's parsePatch 6.7 KB, chosen over parse-diff's 3.9 KB
 * because it reads git's binary, mode and rename headers; the Changes section and its patch view
 * 6.6 KB), the workspace diff in VS Code (workspaceChanges.ts, 1.9 KB) and the workspace schemas both
 * load (CardWorkspace, project settings, card/diff, 3.3 KB) brought them to 542.8 and 560.7 KB.
 * Dispatch raised the extension's to 600 KB and the board's to 560 KB: the dispatch schemas every face
 * reads (core/protocol/dispatch.ts: agent kinds, assignees, a card's dispatch record, pauses, runs and
 * the new methods' params) brought them to 571.5 and 551.9 KB before any face of dispatch was written;
 * the board's dispatch view (pause banner and button, the seat line and last output line, the assignee
 * chip, the shared words in core/rules/dispatched.ts: 3.5 KB) to 555.4 KB; in the extension Start/Stop
 * Agents, Pause/Resume, Assign Card, the seats status bar and the per-seat output channels
 * (commands/runs.ts and pauses.ts 9.2 KB, seatOutput.ts, agentRuns.ts, seatStatusBar.ts,
 * dispatchWatch.ts: 20.4 KB) to 592.1 KB. Epics' faces then raised the board's to 572 KB: the epic
 * chip and progress, label chips, the epic and label filters and the detail's links (epics.ts,
 * tagFilter.ts, detailLinks.ts, cardIndex.ts and the shared roll-up cache core/protocol/epicRollups.ts:
 * 9.7 KB) brought it to 578.5 KB; the tree's nesting (treeNesting.ts, 4.5 KB) the extension to 611.6 KB,
 * its label filter (0.7 KB) to 614.0 KB, the RPC client's hello deadline (0.3 KB) to 614.3 KB, and
 * neutralising agent-written text in the tree, tooltips, notifications, seat output and preview
 * (core/visibleText.ts and its uses, 1.1 KB) to 615.4 KB; the event types of the human verbs and the seat
 * credential's hello field in the shared protocol (0.9 KB) and the claim guards' table with the holds a
 * face derives from the cards it has (core/rules/claimGuards.ts, faceHolds.ts: 4.3 KB) to 620.7 KB of 622.6;
 * the same two (visible escapes of agent text, the guard table's words on the board) took the board
 * to 586.6 KB of 589.8. The check before review raised the extension's to 610 KB: the card's `checks`,
 * the project's check settings and the `checks_finished` event in the shared protocol, and their words
 * in the tree's row and tooltip (core/rules/checks.ts checksSummary) took it to 608.5 KB. What attempts
 * cost raised both by 1 KB: the usage schemas in the shared protocol (an attempt's usage, the sums of
 * card/stats, heartbeat's and dispatch/usage's params) and core/rules/usage.ts's words in the tree's
 * tooltip and the board's detail pane took the extension to 610.1 KB and the board to 577.0 KB. The
 * landing queue (`landing/queue`'s entries and returns, a workspace's landing in flight and its
 * conflict mark) in the shared protocol, its notice and its words (core/rules/landing.ts) on the board
 * (landingView.ts, the card's flag, the detail's box) and in the tree: budgets 615 and 583 KB.
 */
const budgetBytes = { 'dist/extension.js': 615 * 1024, 'dist/webview/board.js': 583 * 1024 };

const common = {
	bundle: true,
	// jsonc-parser's `main` is a UMD build whose require('./impl/…') calls esbuild cannot follow; its
	// ES module build bundles (core/formats/mcpConfig.ts).
	alias: { 'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js' },
	sourcemap: !production,
	sourcesContent: false,
	minify: production,
	logLevel: 'info',
	legalComments: 'none',
};

/**
 * zod re-exports all ~40 of its locales as a namespace, which defeats tree shaking (264 KB of the
 * extension's 568 KB minified). Nothing of ours sets another locale, so the extension, the board and
 * dist/mcp.js get English only.
 */
const zodEnglishOnly = {
	name: 'zod-english-only',
	setup(build) {
		build.onResolve({ filter: /\/locales\/index\.js$/ }, args =>
			args.importer.includes('/node_modules/zod/') ? { path: 'zod-locales-en', namespace: 'zod-locales' } : undefined,
		);
		build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
			contents: 'export { default as en } from "zod/v4/locales/en.js";',
			resolveDir: process.cwd(),
		}));
	},
};
/**
 * The MCP SDK's Server builds an Ajv instance with every format at construction (its JSON Schema
 * validator, used only to check a client's answer to an elicitation, which Baton never asks for):
 * ajv, ajv-formats and fast-uri are 135 KB of dist/mcp.js (minified) that every agent's process
 * loaded, compiled and kept. dist/mcp.js gets a validator that refuses instead; dist/program.js,
 * whose `baton mcp` runs only when main.ts is run directly, keeps the SDK's.
 */
const noElicitationValidator = {
	name: 'no-elicitation-validator',
	setup(build) {
		build.onResolve({ filter: /\/validation\/ajv-provider\.js$/ }, args =>
			args.importer.includes('/@modelcontextprotocol/sdk/')
				? { path: 'ajv-provider', namespace: 'baton-stub' }
				: undefined,
		);
		build.onLoad({ filter: /.*/, namespace: 'baton-stub' }, () => ({
			contents: `export class AjvJsonSchemaValidator {
				getValidator() {
					throw new Error('baton mcp validates no JSON Schema: it never asks the client for input (elicitation)');
				}
			}`,
		}));
	},
};
/** PGlite's Emscripten glue calls createRequire(import.meta.url), which is undefined in a CJS bundle. */
const importMetaUrl = {
	banner: { js: "const __batonImportMetaUrl = require('url').pathToFileURL(__filename).href;" },
	define: { 'import.meta.url': '__batonImportMetaUrl' },
};
/**
 * The `baton` program is three files: dist/baton.js, the bin, only picks one of the other
 * two; dist/mcp.js is `baton mcp` alone (one process per agent: no hub, store or CLI to parse);
 * dist/program.js is everything else (hub, CLI, and `mcp` too when main.ts is run directly).
 */
const builds = [
	{
		...common,
		entryPoints: ['mcp-server/bin.ts'],
		outfile: 'dist/baton.js',
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		banner: { js: '#!/usr/bin/env node' },
	},
	{
		...common,
		entryPoints: ['mcp-server/mcp/main.ts'],
		outfile: 'dist/mcp.js',
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		...importMetaUrl,
		external: ['pg-native'],
		// Whitespace and comments always (identifiers kept for readable stacks), as the extension: V8 keeps
		// each agent's bundle source in its heap, and the comments' few non-ASCII characters (≤, —) made
		// it a two-byte string, 2.6 MB for the 1.3 MB file.
		minifyWhitespace: true,
		minifySyntax: true,
		plugins: [zodEnglishOnly, noElicitationValidator],
	},
	{
		...common,
		entryPoints: ['mcp-server/main.ts'],
		outfile: 'dist/program.js',
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		...importMetaUrl,
		// pg's optional native binding is never used.
		external: ['pg-native'],
	},
];
if (existsSync('extension/main.ts')) {
	builds.push({
		...common,
		entryPoints: ['extension/main.ts'],
		outfile: 'dist/extension.js',
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		external: ['vscode'],
		metafile: true,
		// Whitespace and syntax always (identifiers kept for readable stacks): less to parse at activation
		// and under the 500 KB budget in development builds too.
		minifyWhitespace: true,
		minifySyntax: true,
		plugins: [zodEnglishOnly],
	});
}
if (existsSync('webview/main.ts')) {
	builds.push({
		...common,
		entryPoints: ['webview/main.ts'],
		outfile: 'dist/webview/board.js',
		platform: 'browser',
		format: 'iife',
		target: 'es2022',
		minifyWhitespace: true,
		minifySyntax: true,
		plugins: [zodEnglishOnly],
	});
}

function copyAssets() {
	mkdirSync('dist/pglite', { recursive: true });
	const pgliteDist = 'node_modules/@electric-sql/pglite/dist';
	// pg_trgm.tar.gz: the trigram index of card/list {text} (migration 0012; core/store/pglite.ts).
	for (const file of ['pglite.wasm', 'initdb.wasm', 'pglite.data', 'pg_trgm.tar.gz']) {
		copyFileSync(join(pgliteDist, file), join('dist/pglite', file));
	}
	if (existsSync('webview/board.css')) {
		mkdirSync('dist/webview', { recursive: true });
		copyFileSync('webview/board.css', 'dist/webview/board.css');
	}
	if (existsSync('core/store/template.tar.gz')) {
		copyFileSync('core/store/template.tar.gz', 'dist/pglite/template.tar.gz');
	}
	// Backlog.open reads <assetsDir>/migrations/*.sql when bundled (core/store/migrate.ts).
	if (existsSync('core/store/migrations')) {
		// From scratch: a renamed or removed migration left behind would run again at the next start.
		rmSync('dist/pglite/migrations', { recursive: true, force: true });
		mkdirSync('dist/pglite/migrations', { recursive: true });
		for (const file of readdirSync('core/store/migrations').filter(f => f.endsWith('.sql'))) {
			copyFileSync(join('core/store/migrations', file), join('dist/pglite/migrations', file));
		}
	}
}

function checkBundles() {
	for (const [file, budget] of Object.entries(budgetBytes)) {
		if (existsSync(file) && statSync(file).size > budget) {
			throw new Error(`${file} is ${statSync(file).size} bytes, over the ${budget}-byte budget`);
		}
	}
	if (
		existsSync('dist/extension.js') &&
		/@electric-sql\/pglite|pglite\.wasm/.test(readFileSync('dist/extension.js', 'utf8'))
	) {
		throw new Error('dist/extension.js contains PGlite: the extension must only talk to the hub');
	}
	// Not the extension's test: dist/mcp.js carries package.json (its version), which names the dependency.
	// `baton mcp` runs V8 in lite mode (mcp-server/bin.ts), which has no WebAssembly.
	if (
		existsSync('dist/mcp.js') &&
		/node_modules\/@electric-sql\/|pglite\.wasm|WebAssembly/.test(readFileSync('dist/mcp.js', 'utf8'))
	) {
		throw new Error(
			'dist/mcp.js contains PGlite or WebAssembly: `baton mcp` only talks to the hub and runs without a JIT',
		);
	}
}

/** Prints errors in the `file:line:col: error: message` shape VS Code's problem matcher reads (A). */
const problemMatcher = {
	name: 'problem-matcher',
	setup(build) {
		build.onStart(() => console.log('[watch] build started'));
		build.onEnd(result => {
			for (const { text, location } of result.errors) {
				console.error(`✘ [ERROR] ${text}`);
				if (location) {
					console.error(`    ${location.file}:${location.line}:${location.column}:`);
				}
			}
			console.log('[watch] build finished');
		});
	},
};

const contexts = await Promise.all(
	builds.map(b => esbuild.context(watch ? { ...b, plugins: [...(b.plugins ?? []), problemMatcher] } : b)),
);
copyAssets();
if (watch) {
	await Promise.all(contexts.map(c => c.watch()));
} else {
	await Promise.all(contexts.map(c => c.rebuild()));
	await Promise.all(contexts.map(c => c.dispose()));
	checkBundles();
}
