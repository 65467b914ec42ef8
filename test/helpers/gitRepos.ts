/**
 * Real git repositories for the project tests: a temp folder with `git init` and, when
 * asked, an `origin` remote, so `baton mcp` and the CLI started inside infer their project the way
 * they do on a user's machine. Creates folders under the given parent only; runs only `git`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** `parent/name` as a git repository (with `origin` = `remote` when given); returns its path. */
export function gitRepo(parent: string, name: string, remote?: string): string {
	const dir = join(parent, name);
	mkdirSync(join(dir, 'src'), { recursive: true });
	execFileSync('git', ['init', '-q'], { cwd: dir });
	if (remote !== undefined) {
		execFileSync('git', ['remote', 'add', 'origin', remote], { cwd: dir });
	}
	return dir;
}

/** `parent/name` as a plain folder, in no repository (the parent must not be inside one). */
export function plainFolder(parent: string, name: string): string {
	const dir = join(parent, name);
	mkdirSync(dir, { recursive: true });
	return dir;
}
