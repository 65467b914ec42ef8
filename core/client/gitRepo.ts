/**
 * Which project a folder belongs to, for the faces that start in one: `baton mcp` and the
 * CLI (the working directory) and the VS Code extension (each workspace folder). Asks git for the
 * repository root and its `origin` remote, and derives the id with core/client/projectId.ts. Node only (it
 * runs `git`); it never throws: a folder outside any repository, or a machine without git, has no
 * project (undefined).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

import { projectIdFromFolder, projectIdFromRemote } from './projectId';

/** A git repository as Baton sees it: its root folder and its project id. */
export interface GitRepo {
	root: string;
	project: string;
}

function git(cwd: string, args: readonly string[]): Promise<string | undefined> {
	return new Promise(resolve => {
		execFile('git', [...args], { cwd, timeout: 5000, windowsHide: true }, (error, stdout) => {
			resolve(error === null ? stdout.trim() : undefined);
		});
	});
}

/** The repository `dir` is in (its root and project id), or undefined outside one. */
export async function findGitRepo(dir: string): Promise<GitRepo | undefined> {
	const root = await git(dir, ['rev-parse', '--show-toplevel']);
	if (root === undefined || root === '') {
		return undefined;
	}
	const remote = await git(root, ['config', '--get', 'remote.origin.url']);
	const fromRemote = remote === undefined ? undefined : projectIdFromRemote(remote);
	return { root: path.resolve(root), project: fromRemote ?? projectIdFromFolder(root) };
}

/**
 * The project an agent or a command works in: `explicit` (a `--project` flag) when given, else
 * `BATON_PROJECT`, else the git repository of `dir`; undefined when none applies.
 */
export async function inferProject(
	dir: string,
	explicit?: string,
	env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
	const given = explicit ?? env.BATON_PROJECT;
	if (given !== undefined && given.trim() !== '') {
		return given.trim();
	}
	return (await findGitRepo(dir))?.project;
}
