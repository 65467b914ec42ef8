/** Project ids from git remotes (issue 13 §1), pure: every spelling of one repository gives one id. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { projectIdFromFolder, projectIdFromRemote } from '../../core/projectId';

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
