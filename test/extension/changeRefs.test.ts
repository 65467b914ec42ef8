/**
 * The parser behind Open Changes (extension/changeRefs.ts) under plain node: `commit:` and `branch:`
 * fields in their usual spellings, bare SHAs in prose, and the words that look like SHAs but are not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type ChangeRef, parseChangeRefs, refLabel } from '../../extension/changeRefs';

const commit = (sha: string): ChangeRef => ({ kind: 'commit', sha });
const branch = (name: string): ChangeRef => ({ kind: 'branch', name });

describe('parseChangeRefs', () => {
	it('reads commit and branch fields in the spellings agents write', () => {
		assert.deepEqual(parseChangeRefs('Rate limiting done.\ncommit: 1a2b3c4d\nbranch: feature/rate-limit'), [
			commit('1a2b3c4d'),
			branch('feature/rate-limit'),
		]);
		assert.deepEqual(parseChangeRefs('- Commit = `9F8E7D6C5B4A`\n* branch: `fix/login`.'), [
			commit('9f8e7d6c5b4a'),
			branch('fix/login'),
		]);
		assert.deepEqual(parseChangeRefs('{"commit": "abc1234", "branch": "main"}'), [commit('abc1234'), branch('main')]);
		assert.deepEqual(parseChangeRefs('sha: 0123456789abcdef0123456789abcdef01234567'), [
			commit('0123456789abcdef0123456789abcdef01234567'),
		]);
	});

	it('finds SHAs in prose and in commit links, once each', () => {
		assert.deepEqual(parseChangeRefs('Fixed in 3e4f5a6 (see also 3e4f5a6).'), [commit('3e4f5a6')]);
		assert.deepEqual(parseChangeRefs('https://github.com/o/r/commit/a1b2c3d4e5f6'), [commit('a1b2c3d4e5f6')]);
		assert.deepEqual(
			parseChangeRefs('commit: a1b2c3d4e5f6a7b8\nMerged a1b2c3d.'),
			[commit('a1b2c3d4e5f6a7b8')],
			'a prefix of the named commit is the same commit',
		);
	});

	it('ignores what only looks like a SHA', () => {
		assert.deepEqual(parseChangeRefs('Took 1234567 ms over 4 deadbeef runs'), [], 'all digits or all letters');
		assert.deepEqual(parseChangeRefs('id 550e8400-e29b-41d4-a716-446655440000'), [], 'parts of a UUID');
		assert.deepEqual(parseChangeRefs(`sha256 ${'ab12'.repeat(16)}`), [], 'a 64-character hash');
		assert.deepEqual(parseChangeRefs('commit: not-a-sha\nbranch: ../etc\nbranch: -rf'), [], 'invalid values');
		assert.deepEqual(parseChangeRefs(null), []);
		assert.deepEqual(parseChangeRefs(''), []);
	});

	it('labels refs for pickers and messages', () => {
		assert.equal(refLabel(commit('0123456789abcdef')), 'commit 0123456');
		assert.equal(refLabel(branch('feature/x')), 'branch feature/x');
	});
});
