/**
 * Worktrees nested in the repository must not leak into the main checkout's own tools.
 * Baton's own repository: on a fixture that carries this project's real tsconfig files, a card
 * worktree's files are outside every `tsc -p` project the typecheck runs; the test scripts name their
 * files under test/ only; eslint.config.mjs's `ignores` and .prettierignore list `.baton/`. A user's
 * repository, where Baton commits nothing: git (info/exclude), tsc (wildcards skip dot-folders) and a
 * test script that names its folder ignore the worktrees by themselves; a bare `node --test` does not;
 * ESLint 9 (reads neither .gitignore nor info/exclude) needs `ignores: ['.baton/']` in its config and
 * Prettier (reads .gitignore and .prettierignore, not info/exclude) `.baton/` in .prettierignore
 * (docs/guide.md, Workspaces).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { ESLint } from 'eslint';
import * as prettier from 'prettier';

import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const projectRoot = path.join(__dirname, '..', '..');
/** The projects scripts/typecheck.mjs checks, read from it so this test follows its list. */
const typecheckProjects = JSON.parse(
	(
		/const projects = (\[[^\]]*\])/.exec(readFileSync(path.join(projectRoot, 'scripts/typecheck.mjs'), 'utf8'))?.[1] ??
		'[]'
	).replaceAll("'", '"'),
) as string[];

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

describe('the main checkout ignores .baton/worktrees', () => {
	it('tsc: no typecheck project includes a file of a card worktree', async () => {
		assert.ok(typecheckProjects.length >= 5, `projects read from typecheck.mjs: ${typecheckProjects.join(', ')}`);
		const r = makeRepo({ '.gitignore': 'node_modules\n' });
		repos.push(r);
		copyFileSync(path.join(projectRoot, 'tsconfig.base.json'), path.join(r.root, 'tsconfig.base.json'));
		for (const p of typecheckProjects) {
			mkdirSync(path.join(r.root, p));
			copyFileSync(path.join(projectRoot, p, 'tsconfig.json'), path.join(r.root, p, 'tsconfig.json'));
			writeFiles(r.root, { [`${p}/a.ts`]: 'export const a = 1;\n' });
		}
		symlinkSync(path.join(projectRoot, 'node_modules'), path.join(r.root, 'node_modules'));
		commitAllFiles(r.root, 'the project layout');
		const ws = await ensureWorktree({ repo: r.root, cardId: 'T1' });
		for (const p of typecheckProjects) {
			writeFiles(ws.path, { [`${p}/broken.ts`]: 'export const b: number = "not a number";\n' });
		}
		const tsc = path.join(projectRoot, 'node_modules/typescript/bin/tsc');
		for (const p of typecheckProjects) {
			// --showConfig lists the root files the include globs matched, without loading the program.
			const shown = JSON.parse(
				execFileSync(process.execPath, [tsc, '-p', p, '--showConfig'], { cwd: r.root, encoding: 'utf8' }),
			) as {
				files: string[];
			};
			assert.ok(shown.files.includes(`./a.ts`), `${p} lists its own files: ${shown.files.join(', ')}`);
			assert.deepEqual(
				shown.files.filter(f => f.includes('.baton')),
				[],
				`${p} includes worktree files`,
			);
		}
	});

	it('tsc: a wildcard include never enters a dot-folder, so a root `**/*.ts` project skips .baton/ too', async () => {
		const r = makeRepo({ 'tsconfig.json': '{ "include": ["**/*.ts"] }\n', 'src/a.ts': 'export const a = 1;\n' });
		repos.push(r);
		const ws = await ensureWorktree({ repo: r.root, cardId: 'T2' });
		writeFiles(ws.path, { 'src/b.ts': 'export const b = 2;\n' });
		const tsc = path.join(projectRoot, 'node_modules/typescript/bin/tsc');
		const shown = JSON.parse(
			execFileSync(process.execPath, [tsc, '-p', '.', '--showConfig'], { cwd: r.root, encoding: 'utf8' }),
		) as {
			files: string[];
		};
		assert.deepEqual(shown.files, ['./src/a.ts']);
	});

	it('test runners: every test file the package scripts name is under test/', () => {
		const scripts = (
			JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
		).scripts;
		const globs = Object.values(scripts).flatMap(s => s.split(/\s+/).filter(w => /\.test\.ts$|\/\*\*/.test(w)));
		assert.ok(globs.length > 0);
		assert.deepEqual(
			globs.filter(g => !g.startsWith('test/')),
			[],
		);
	});

	const worktreeFile = path.join(projectRoot, '.baton', 'worktrees', 'X', 'core', 'a.ts');
	it('eslint ignores .baton/', async () => {
		assert.equal(await new ESLint({ cwd: projectRoot }).isPathIgnored(worktreeFile), true);
	});
	it('prettier ignores .baton/', async () => {
		const info = await prettier.getFileInfo(worktreeFile, {
			ignorePath: [path.join(projectRoot, '.gitignore'), path.join(projectRoot, '.prettierignore')],
		});
		assert.equal(info.ignored, true);
	});
});

/**
 * A user's repository, where Baton commits nothing: what keeps a card worktree out of each tool
 * without the user's help (git, tsc, a test script that names its folder), and what needs one line
 * of theirs (ESLint's config, .prettierignore; a bare `node --test`): docs/guide.md, Workspaces.
 */
describe("a user's repository: what is automatic and what the user adds", () => {
	const failing = "require('node:test')('worktree test', () => { throw new Error('a worktree test ran'); });\n";
	// A child `node --test` must print its own TAP, not report to this run's runner (NODE_TEST_CONTEXT).
	const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT'));
	async function userRepo(files: Record<string, string>): Promise<{ root: string; wt: string }> {
		const r = makeRepo({ 'README.md': '# app\n', ...files });
		repos.push(r);
		const ws = await ensureWorktree({ repo: r.root, cardId: 'U1' });
		return { root: r.root, wt: ws.path };
	}

	it('git: info/exclude keeps the worktrees out of status and `git add -A` (automatic)', async () => {
		const { root, wt } = await userRepo({ 'src/a.js': 'export const a = 1;\n' });
		writeFiles(wt, { 'src/b.js': 'export const b = 2;\n' });
		assert.equal(gitOut(root, 'status', '--porcelain', '--untracked-files=all'), '');
		gitOut(root, 'add', '-A');
		assert.equal(gitOut(root, 'diff', '--cached', '--name-only'), '');
	});

	it('node --test: a test script that names its folder skips the worktrees; bare discovery enters them', async () => {
		const { root, wt } = await userRepo({
			'package.json': JSON.stringify({ name: 'app', private: true, scripts: { test: 'node --test test/' } }),
			'test/a.test.js': "require('node:test')('main test', () => {});\n",
		});
		writeFiles(wt, { 'test/b.test.js': failing });
		const npm = spawnSync('npm', ['test', '--silent'], { cwd: root, env, encoding: 'utf8' });
		assert.equal(npm.status, 0, npm.stdout + npm.stderr);
		assert.match(npm.stdout, /^# tests 1$/m);
		// Node's discovery without paths skips node_modules only: it runs the worktree's tests too.
		const bare = spawnSync(process.execPath, ['--test'], { cwd: root, env, encoding: 'utf8' });
		assert.notEqual(bare.status, 0);
		assert.match(bare.stdout, /a worktree test ran/);
	});

	it("ESLint 9 lints .baton/ (it reads neither .gitignore nor info/exclude) until the config's `ignores` lists it", async () => {
		const config = (ignores: string) =>
			`export default [${ignores}{ files: ['**/*.js'], rules: { 'no-undef': 'error' } }];\n`;
		const { root, wt } = await userRepo({ 'eslint.config.mjs': config(''), 'src/a.js': 'export const a = 1;\n' });
		writeFiles(wt, { 'src/b.js': 'export const b = undefinedThing;\n' });
		const linted = async (flags: string[] = []) =>
			(await new ESLint({ cwd: root, flags }).lintFiles(['.'])).map(r => path.relative(root, r.filePath)).sort();
		assert.ok((await linted()).includes('.baton/worktrees/U1/src/b.js'));
		writeFileSync(path.join(root, 'eslint.config.mjs'), config("{ ignores: ['.baton/'] }, "));
		assert.deepEqual(await linted(), ['eslint.config.mjs', 'src/a.js']);
		// ESLint 10's lookup from each file (a flag in 9): the worktree's own copy of the config is never reached.
		assert.deepEqual(await linted(['unstable_config_lookup_from_file']), ['eslint.config.mjs', 'src/a.js']);
	});

	it('Prettier reads .gitignore and .prettierignore, not info/exclude: `.baton/` in .prettierignore', async () => {
		const { root, wt } = await userRepo({ 'src/a.ts': 'export const a = 1;\n' });
		writeFiles(wt, { 'src/b.ts': 'export   const b=2\n' });
		const prettierBin = path.join(projectRoot, 'node_modules/prettier/bin/prettier.cjs');
		const listed = () =>
			spawnSync(process.execPath, [prettierBin, '--list-different', '.'], { cwd: root, encoding: 'utf8' })
				.stdout.split('\n')
				.filter(l => l !== '');
		assert.ok(listed().includes('.baton/worktrees/U1/src/b.ts'), listed().join(', '));
		writeFileSync(path.join(root, '.prettierignore'), '.baton/\n');
		assert.deepEqual(listed(), []);
	});
});
