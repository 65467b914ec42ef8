/**
 * Worktrees nested in the repository must not leak into the main checkout's own tools (issue 33). On a
 * fixture repository that carries this project's real tsconfig files, a card worktree's files are
 * outside every `tsc -p` project the typecheck runs; the test scripts name their files under
 * test/ only. ESLint (flat config: dot-folders are linted, .gitignore and info/exclude are not read) and
 * Prettier (reads .gitignore and .prettierignore, not info/exclude) would see `.baton/`, so
 * eslint.config.mjs's `ignores` and .prettierignore list it (docs/architecture.md, Workspaces).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { ESLint } from 'eslint';
import * as prettier from 'prettier';

import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { commitAllFiles, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

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
