/** Project ids from git remotes: every spelling of one repository gives one id; a folder's project. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

import { findGitRepo, inferProject } from '../../core/client/gitRepo';
import { projectIdFromFolder, projectIdFromRemote } from '../../core/client/projectId';

describe('project ids', () => {
	it('normalises every spelling of a remote to host/path', () => {
		for (const url of [
			'git@github.com:acme/web.git',
			'git@github.com:Acme/Web',
			'https://github.com/acme/web.git',
			'https://github.com/acme/web/',
			'https://x-access-token:ghp_secret@github.com/acme/web.git',
			'ssh://git@github.com:22/acme/web.git',
			'ssh://git@GitHub.com/acme/web',
			'  https://github.com/acme/web  ',
		]) {
			assert.equal(projectIdFromRemote(url), 'github.com/acme/web', url);
		}
		assert.equal(
			projectIdFromRemote('https://gitlab.example.com/group/sub/repo.git'),
			'gitlab.example.com/group/sub/repo',
		);
		assert.equal(projectIdFromRemote('git@bitbucket.org:team/app.git'), 'bitbucket.org/team/app');
	});

	it('never keeps credentials, and gives up on remotes that name no shared repository', () => {
		assert.doesNotMatch(projectIdFromRemote('https://user:pass@host.dev/a/b') ?? '', /user|pass/);
		assert.equal(projectIdFromRemote(''), undefined);
		assert.equal(projectIdFromRemote('file:///srv/git/web.git'), undefined);
		assert.equal(projectIdFromRemote('/srv/git/web.git'), undefined);
		assert.equal(projectIdFromRemote('https://github.com/'), undefined);
		assert.equal(projectIdFromRemote('not a url'), undefined);
	});

	it('falls back to the repository root folder name', () => {
		assert.equal(projectIdFromFolder('/home/ada/src/web'), 'web');
		assert.equal(projectIdFromFolder('/home/ada/src/web/'), 'web');
		assert.equal(projectIdFromFolder('C:\\src\\web'), 'web');
	});
});

describe('the project of a folder (real git)', () => {
	const run = (cwd: string, ...args: string[]): void => {
		execFileSync('git', args, { cwd, stdio: 'ignore' });
	};

	it('is the origin remote of its repository, from any folder inside it', async () => {
		const dir = mkdtempSync(path.join(tmpdir(), 'bt-gitrepo-'));
		try {
			const repo = path.join(dir, 'Web');
			mkdirSync(path.join(repo, 'src', 'auth'), { recursive: true });
			run(repo, 'init', '-q');
			assert.deepEqual(await findGitRepo(path.join(repo, 'src', 'auth')), {
				root: realpathSync(repo),
				project: 'Web',
			});
			run(repo, 'remote', 'add', 'origin', 'git@github.com:Acme/Web.git');
			assert.equal(await inferProject(path.join(repo, 'src'), undefined, {}), 'github.com/acme/web');
			assert.equal(await inferProject(repo, 'other', { BATON_PROJECT: 'env' }), 'other');
			assert.equal(await inferProject(repo, undefined, { BATON_PROJECT: 'env' }), 'env');
			assert.equal(await inferProject(dir, undefined, {}), undefined, 'outside a repository: no project');
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
