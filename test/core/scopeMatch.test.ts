/**
 * The scope matcher (core/scope/match.ts), pure: compiled globs against picomatch as an oracle on every
 * path of a generated universe (scope.test.ts's dialect: `**` is zero or more segments, dotfiles
 * match; picomatch is given `[^…]` for `[!…]`), the brace expansion against what the braces library
 * (bash's rules) gives, the index against testing every glob, and the lenient read of a stored scope
 * against the gate's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import picomatch from 'picomatch';

import { braceCount, expandBraces } from '../../core/scope/braces';
import { checkScope } from '../../core/scope/check';
import { readScope } from '../../core/scope/read';
import { LiveScopes, liveScope, scopesOverlap } from '../../core/scope/conflicts';
import { ScopeIndex, compileGlob, matchScope } from '../../core/scope/match';
import { makeCard } from '../helpers/cards';
import { pathUniverse } from '../helpers/pathUniverse';
import { prng } from '../helpers/prng';

const universe = pathUniverse(['a', 'b', 'aa', 'ab', 'ba', '.a', 'a.', 'b.b', 'x-1']);

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

	it('reads typical scopes the way an agent means them', () => {
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

	it('expands braces as bash and the braces library do, and counts before expanding', () => {
		// Expected: the braces library's output (the hub's expander before core/scope/braces.ts), recorded.
		const cases: [string, string[]][] = [
			['src/{a,b}/**', ['src/a/**', 'src/b/**']],
			['{a,b}/{c,d}.ts', ['a/c.ts', 'a/d.ts', 'b/c.ts', 'b/d.ts']],
			['f{1..3}.ts', ['f1.ts', 'f2.ts', 'f3.ts']],
			[
				'f{01..10}.ts',
				['f01.ts', 'f02.ts', 'f03.ts', 'f04.ts', 'f05.ts', 'f06.ts', 'f07.ts', 'f08.ts', 'f09.ts', 'f10.ts'],
			],
			['f{3..1}.ts', ['f3.ts', 'f2.ts', 'f1.ts']],
			['f{-2..2}.ts', ['f-2.ts', 'f-1.ts', 'f0.ts', 'f1.ts', 'f2.ts']],
			['f{1..9..3}.ts', ['f1.ts', 'f4.ts', 'f7.ts']],
			['{a..e}.md', ['a.md', 'b.md', 'c.md', 'd.md', 'e.md']],
			['a{b}c', ['a{b}c']],
			['a{}c', ['a{}c']],
			['x{a,}y', ['xay', 'xy']],
			['plain/**', ['plain/**']],
			['{src,test}/**/*.{ts,tsx}', ['src/**/*.ts', 'src/**/*.tsx', 'test/**/*.ts', 'test/**/*.tsx']],
			['{x,y}{1..3}b/*.ts', ['x1b/*.ts', 'x2b/*.ts', 'x3b/*.ts', 'y1b/*.ts', 'y2b/*.ts', 'y3b/*.ts']],
			[
				'**/{p,q,r}{a..c}.ts',
				['**/pa.ts', '**/pb.ts', '**/pc.ts', '**/qa.ts', '**/qb.ts', '**/qc.ts', '**/ra.ts', '**/rb.ts', '**/rc.ts'],
			],
			['{-05..5..5}', ['-05', '000', '005']],
		];
		for (const [glob, expected] of cases) {
			assert.deepEqual(expandBraces(glob, 64), expected, glob);
			assert.equal(braceCount(glob), expected.length, glob);
		}
		assert.equal(expandBraces('{E..a}.md', 64).length, 29);
		assert.equal(braceCount('f{1..100}{a..z}'), 2600, 'counted, not expanded');
		assert.equal(expandBraces('f{1..100}{a..z}', 64).length, 64, 'expanded up to the limit');
	});

	it('reads a stored scope as the gate checks it, and the live index finds what a pairwise scan finds', () => {
		const entries = ['./src/{auth,session}/**', 'src/auth/**', 'lock:db-migrations', 'package.json', 'a/./b'];
		assert.deepEqual(readScope(entries), checkScope(entries));
		const random = prng(99);
		const scope = (): string[] =>
			Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
				random() < 0.15 ? `lock:${random() < 0.5 ? 'db' : 'ui'}` : randomGlob(random).replace('[!a]', '{a,b}'),
			);
		let overlapping = 0;
		for (let k = 0; k < 300; k++) {
			const held = Array.from({ length: 4 }, (_, i) => ({ i, entries: scope() }));
			const live = new LiveScopes(
				held.map(h => ({ cardId: `H${h.i}`, holder: 'x', title: 't', project: null, entries: h.entries })),
			);
			const mine = scope();
			const expected = held.find(h => scopesOverlap(checkScope(mine), checkScope(h.entries)) !== undefined);
			const found = live.conflict(null, mine);
			assert.equal(found === undefined, expected === undefined, `${mine.join(' ')} vs ${JSON.stringify(held)}`);
			if (found !== undefined) {
				const h = held.find(x => `H${x.i}` === found.cardId);
				assert.ok(h !== undefined && scopesOverlap(checkScope([found.mine]), checkScope([found.theirs])));
				assert.ok(h.entries.length > 0);
			}
			overlapping += found === undefined ? 0 : 1;
		}
		assert.ok(overlapping > 30 && overlapping < 270, `${overlapping} of 300 overlap`);
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
