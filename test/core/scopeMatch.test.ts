/**
 * The scope matcher (core/scopeMatch.ts), pure: compiled globs against picomatch as an oracle on every
 * path of a generated universe (scope.test.ts's dialect: `**` is zero or more segments, dotfiles
 * match; picomatch is given `[^…]` for `[!…]`), the hand-written brace expansion against the braces
 * library, the index against testing every glob, and the entries' overlap against core/scope.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import braces from 'braces';
import picomatch from 'picomatch';

import { checkScope, scopesOverlap } from '../../core/scope';
import {
	ScopeIndex,
	compileGlob,
	expandBraces,
	liveScope,
	matchScope,
	scopeEntriesOverlap,
	scopeGlobs,
} from '../../core/scopeMatch';
import { makeCard } from '../helpers/cards';
import { prng } from '../helpers/prng';

const names = ['a', 'b', 'aa', 'ab', 'ba', '.a', 'a.', 'b.b', 'x-1'];
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

const segmentPatterns = [
	'a',
	'b',
	'*',
	'?',
	'a*',
	'*b',
	'[ab]',
	'[!a]',
	'[^b]',
	'**',
	'?a',
	'*a*',
	'a?',
	'.*',
	'[a-b]b',
	'x\\-1',
	'*.b',
];

function oracle(glob: string): (path: string) => boolean {
	const match = picomatch(glob.replace(/\[!/g, '[^'), { dot: true });
	const bare = glob.endsWith('/**') ? oracle(glob.slice(0, -3)) : undefined;
	return path => match(path) || (bare?.(path) ?? false);
}

function randomGlob(random: () => number): string {
	return Array.from(
		{ length: 1 + Math.floor(random() * 4) },
		() => segmentPatterns[Math.floor(random() * segmentPatterns.length)],
	).join('/');
}

describe('scope matcher', () => {
	it('agrees with picomatch on every path of the universe for 300 generated globs', () => {
		const random = prng(20261125);
		let matched = 0;
		let tested = 0;
		for (let k = 0; k < 300; k++) {
			const glob = randomGlob(random);
			const { regex } = compileGlob(glob);
			const expected = oracle(glob);
			for (const path of universe) {
				const got = regex.test(path);
				assert.equal(got, expected(path), `${glob} on ${path}`);
				matched += got ? 1 : 0;
				tested++;
			}
		}
		// Both answers occur often, so neither is right by accident only.
		assert.ok(matched > tested / 50 && matched < tested / 2, `${matched} of ${tested} matched`);
	});

	it('reads the issue’s scopes the way an agent means them', () => {
		const held = matchScope(['src/auth/**', 'package.json', './docs/{api,guide}.md', 'lock:db-migrations']);
		for (const p of [
			'src/auth',
			'src/auth/login.ts',
			'src/auth/.env',
			'package.json',
			'docs/api.md',
			'docs/guide.md',
		]) {
			assert.equal(held(p), true, p);
		}
		for (const p of ['src/authz/x.ts', 'src/billing/a.ts', 'web/package.json', 'docs/other.md', 'db-migrations']) {
			assert.equal(held(p), false, p);
		}
		assert.equal(matchScope(['**/*.test.ts'])('test/a/b.test.ts'), true);
		assert.equal(matchScope(['**/*.test.ts'])('b.test.ts'), true);
		assert.equal(matchScope(['docs/\\*.md'])('docs/a.md'), false, 'an escaped star is a literal');
		assert.equal(matchScope(['docs/\\*.md'])('docs/*.md'), true);
		assert.equal(matchScope(['a[b'])('a[b'), true, 'an unclosed class is literal');
		assert.equal(matchScope(['src/(x)+.ts'])('src/(x)+.ts'), true, 'RegExp syntax in a name is literal');
		assert.equal(matchScope(['src/(x)+.ts'])('src/xx.ts'), false);
	});

	it('expands braces as the braces library does', () => {
		const cases = [
			'src/{a,b}/**',
			'{a,b}/{c,d}.ts',
			'f{1..3}.ts',
			'f{01..10}.ts',
			'f{3..1}.ts',
			'f{-2..2}.ts',
			'f{1..9..3}.ts',
			'{a..e}.md',
			'{E..a}.md',
			'a{b}c',
			'a{}c',
			'x{a,}y',
			'plain/**',
			'{src,test}/**/*.{ts,tsx}',
		];
		const random = prng(7);
		const parts = ['a', 'b/', '{x,y}', '{1..3}', '*', '{p,q,r}', '.ts', '{a..c}', '**/'];
		for (let k = 0; k < 200; k++) {
			cases.push(
				Array.from({ length: 2 + Math.floor(random() * 4) }, () => parts[Math.floor(random() * parts.length)]).join(''),
			);
		}
		let compared = 0;
		for (const c of cases) {
			const expected = braces(c, { expand: true });
			// core/scope.ts refuses an entry of more than 64 globs; the matcher caps there too.
			if (expected.length <= 64) {
				assert.deepEqual(new Set(expandBraces(c)), new Set(expected), c);
				compared++;
			} else {
				assert.equal(expandBraces(c).length, 64, c);
			}
		}
		assert.ok(compared > 150, `${compared} compared`);
	});

	it('reads scopes as core/scope.ts checks them: same globs, same overlaps', () => {
		const entries = ['./src/{auth,session}/**', 'src/auth/**', 'lock:db-migrations', 'package.json', 'a/./b'];
		assert.deepEqual(scopeGlobs(entries), checkScope(entries).globs);
		const random = prng(99);
		const scope = (): string[] =>
			Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
				random() < 0.15 ? `lock:${random() < 0.5 ? 'db' : 'ui'}` : randomGlob(random).replace('[!a]', '{a,b}'),
			);
		let overlapping = 0;
		for (let k = 0; k < 1000; k++) {
			const [a, b] = [scope(), scope()];
			const mine = scopeEntriesOverlap(a, b);
			const core = scopesOverlap(checkScope(a), checkScope(b));
			assert.equal(mine === undefined, core === undefined, `${a.join(' ')} vs ${b.join(' ')}`);
			overlapping += mine === undefined ? 0 : 1;
		}
		assert.ok(overlapping > 100 && overlapping < 900, `${overlapping} of 1000 overlap`);
	});

	it('indexes many scopes and finds exactly the owners a full scan finds', () => {
		const random = prng(3);
		const index = new ScopeIndex<number>();
		const scopes: string[][] = [];
		for (let owner = 0; owner < 60; owner++) {
			const entries = Array.from({ length: 1 + Math.floor(random() * 4) }, () => randomGlob(random));
			scopes.push(entries);
			index.add(owner, entries);
		}
		const scans = scopes.map(s => matchScope(s));
		let hits = 0;
		for (const path of universe) {
			const expected = scans.flatMap((m, owner) => (m(path) ? [owner] : []));
			assert.deepEqual(
				[...index.match(path)].sort((x, y) => x - y),
				expected,
				path,
			);
			hits += expected.length;
		}
		assert.ok(hits > 0);
	});

	it('a card’s live scope is scope ∪ reserved while claimed, and nothing otherwise', () => {
		const card = makeCard({
			id: 'A1',
			status: 'claimed',
			scope: ['src/**', 'lock:db'],
			reserved: ['docs/**', 'src/**'],
		});
		assert.deepEqual(liveScope(card), ['src/**', 'lock:db', 'docs/**']);
		assert.deepEqual(liveScope({ ...card, status: 'review' }), []);
		assert.deepEqual(liveScope(makeCard({ id: 'A2', status: 'claimed' })), []);
	});
});
