/**
 * Scopes (issue 13 §2), pure: the glob overlap rules against picomatch as an oracle over a universe
 * small enough to search exhaustively (every pair of 4,000 generated globs agrees: an overlap has a
 * witness path, and no witness means no overlap), the issue's own examples, locks, and every refusal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import picomatch from 'picomatch';

import { BatonError } from '../../core/errors';
import { globsOverlap } from '../../core/globOverlap';
import { checkScope, scopeLimits, scopesOverlap } from '../../core/scope';
import { prng } from '../helpers/prng';

/** Every path of 1–4 segments over these names: a witness to any overlap of the globs below. */
const names = ['a', 'b', 'aa', 'ab', 'ba', 'bb', '.a', '.b', 'a.', 'b.'];
const universe: string[] = [];
const grow = (prefix: string[]): void => {
	if (prefix.length > 0) {
		universe.push(prefix.join('/'));
	}
	if (prefix.length < 4) {
		for (const n of names) {
			grow([...prefix, n]);
		}
	}
};
grow([]);

/** Segment patterns: literals, ?, *, classes ([^…]: picomatch 2 reads [!…] as a literal), globstar. */
const segmentPatterns = ['a', 'b', '*', '?', 'a*', '*b', '[ab]', '[^a]', '**', '?a', '*a*', 'a?', '.*', '[a-b]b'];

/** picomatch, with Baton's reading of a trailing `/**` (zero or more segments: `x/**` covers `x`). */
function oracle(glob: string): (path: string) => boolean {
	const match = picomatch(glob, { dot: true });
	const bare = glob.endsWith('/**') ? oracle(glob.slice(0, -3)) : undefined;
	return path => match(path) || (bare?.(path) ?? false);
}

describe('glob overlap', () => {
	it('agrees with picomatch on 4,000 generated pairs, searched exhaustively', () => {
		const random = prng(20261125);
		const glob = (): string =>
			Array.from(
				{ length: 1 + Math.floor(random() * 3) },
				() => segmentPatterns[Math.floor(random() * segmentPatterns.length)],
			).join('/');
		let overlapping = 0;
		for (let k = 0; k < 4000; k++) {
			const a = glob();
			const b = glob();
			const [ma, mb] = [oracle(a), oracle(b)];
			const witness = universe.find(p => ma(p) && mb(p));
			const decided = globsOverlap(a, b);
			assert.equal(decided, witness !== undefined, `${a} vs ${b}: decided ${decided}, witness ${witness ?? 'none'}`);
			assert.equal(globsOverlap(b, a), decided, `${a} vs ${b} is symmetric`);
			overlapping += decided ? 1 : 0;
		}
		// Both answers are well represented, so neither direction is tested by accident only.
		assert.ok(overlapping > 500 && overlapping < 3500, `${overlapping} of 4000 overlap`);
	});

	it('decides the issue’s examples', () => {
		assert.equal(globsOverlap('src/**', 'src/a.ts'), true);
		assert.equal(globsOverlap('src/a/**', 'src/b/**'), false);
		assert.equal(globsOverlap('**/*.ts', 'src/x.ts'), true);
		assert.equal(globsOverlap('package.json', 'package.json'), true);
		assert.equal(globsOverlap('src/*.ts', 'src/*.js'), false);
		assert.equal(globsOverlap('src/**/*.ts', 'src/deep/a/b.ts'), true);
		assert.equal(globsOverlap('src/auth/**', 'src/**/login.ts'), true);
		assert.equal(globsOverlap('src/[a-c]*.ts', 'src/d*.ts'), false);
		assert.equal(globsOverlap('docs/\\*.md', 'docs/a.md'), false, 'an escaped star is a literal');
		assert.equal(globsOverlap('.*', '?'), false, 'no file is named "."');
		assert.equal(globsOverlap('src/.*', 'src/*'), true, 'dotfiles count');
	});
});

describe('scopes', () => {
	const refused = (entries: string[], text: RegExp): void => {
		assert.throws(
			() => checkScope(entries),
			(e: unknown) => BatonError.is(e, 'invalid_input') && text.test(e.message),
		);
	};

	it('expands braces, drops ./ and duplicates, and keeps locks apart', () => {
		assert.deepEqual(checkScope(['./src/{auth,session}/**', 'src/auth/**', 'lock:db-migrations', 'package.json']), {
			globs: ['src/auth/**', 'src/session/**', 'package.json'],
			locks: ['db-migrations'],
		});
	});

	it('overlap names the first meeting pair; locks meet only by name', () => {
		const auth = checkScope(['src/auth/**', 'lock:db-migrations']);
		assert.deepEqual(scopesOverlap(auth, checkScope(['src/billing/**', 'src/auth/login.ts'])), {
			mine: 'src/auth/**',
			theirs: 'src/auth/login.ts',
		});
		assert.deepEqual(scopesOverlap(auth, checkScope(['lock:db-migrations'])), {
			mine: 'lock:db-migrations',
			theirs: 'lock:db-migrations',
		});
		assert.equal(scopesOverlap(auth, checkScope(['src/billing/**', 'lock:search-index'])), undefined);
		assert.equal(scopesOverlap(checkScope(['lock:src']), checkScope(['src/**'])), undefined);
	});

	it('refuses, naming the entry and what to write instead', () => {
		refused(['/repo/src/**'], /"\/repo\/src\/\*\*" is an absolute path/);
		refused(['C:\\repo\\src'], /absolute path/);
		refused(['~/src'], /absolute path/);
		refused(['src/../../etc/passwd'], /leaves the project root/);
		refused(['..'], /leaves the project root/);
		refused([''], /1 to 256 characters/);
		refused(['x'.repeat(257)], /1 to 256 characters/);
		refused(['./'], /names no path/);
		refused(['lock:db migrations'], /not a lock name.*no spaces/);
		refused(['lock:'], /not a lock name/);
		refused(['src/a\u0007.ts'], /control character/);
		refused(['f{1..100}.ts'], /expands to|at most 64/);
		refused(
			Array.from({ length: scopeLimits.entries + 1 }, (_, i) => `f${i}.ts`),
			/at most 64 entries; this one has 65/,
		);
		assert.equal(checkScope(Array.from({ length: 64 }, (_, i) => `f${i}.ts`)).globs.length, 64);
	});
});
