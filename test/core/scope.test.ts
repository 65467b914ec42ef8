/**
 * Scopes, pure: the glob overlap rules against picomatch as an oracle over a universe
 * small enough to search exhaustively (every pair of 4,000 generated globs agrees: an overlap has a
 * witness path, and no witness means no overlap), the examples agents write, locks, and every refusal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import picomatch from 'picomatch';

import { BatonError } from '../../core/errors';
import { checkScope } from '../../core/scope/check';
import { scopeCharacters, scopeLimits } from '../../core/scope/read';
import { LiveScopes, scopesOverlap } from '../../core/scope/conflicts';
import { globsOverlap, globsOverlapByProduct, overlapSteps } from '../../core/scope/overlap';
import { pathUniverse } from '../helpers/pathUniverse';
import { prng } from '../helpers/prng';

/** Every path of 1–4 segments over these names: a witness to any overlap of the globs below. */
const universe = pathUniverse(['a', 'b', 'aa', 'ab', 'ba', 'bb', '.a', '.b', 'a.', 'b.']);

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

	it('decides as the product of the two globs does, on 20,000 generated pairs of long segments', () => {
		// The product (Baton's check before the linear one) is exact and quadratic; the linear check must agree
		// with it on the shapes the exhaustive test above is too small to reach: many stars, long runs.
		const random = prng(27);
		const tokens = ['a', 'b', '.', '*', '?', '[ab]', '[!a]', '[.a]', 'a', 'b', '*'];
		const segment = (): string => {
			if (random() < 0.15) {
				return '**';
			}
			const n = 1 + Math.floor(random() * 9);
			return Array.from({ length: n }, () => tokens[Math.floor(random() * tokens.length)]).join('');
		};
		const glob = (): string => Array.from({ length: 1 + Math.floor(random() * 4) }, segment).join('/');
		let overlapping = 0;
		for (let k = 0; k < 20_000; k++) {
			const [a, b] = [glob(), glob()];
			const expected = globsOverlapByProduct(a, b);
			assert.equal(globsOverlap(a, b), expected, `${a} vs ${b}`);
			overlapping += expected ? 1 : 0;
		}
		assert.ok(overlapping > 3000 && overlapping < 17_000, `${overlapping} of 20000 overlap`);
	});

	it('costs steps linear in the globs for the shapes that froze the hub', () => {
		const repro = '*a'.repeat(100) + '*bjA1';
		const cost = (a: string, b: string): number => {
			const before = overlapSteps();
			globsOverlap(a, b);
			return overlapSteps() - before;
		};
		// The product took ~4 × 205 × 205 steps for this pair; the check takes a few per character.
		assert.ok(cost(repro, repro) <= 2 * repro.length, `${cost(repro, repro)} steps`);
		assert.ok(cost(repro, repro.replace('A1', 'A2')) <= 2 * repro.length);
		const deep = '**/' + 'a/'.repeat(100) + 'x';
		assert.ok(cost(deep, 'a/**/'.repeat(40) + 'y') <= 2 * deep.length);
		const fixed = 'a'.repeat(200);
		assert.equal(globsOverlap(fixed, '*' + 'a'.repeat(50) + '*'), true);
		assert.equal(globsOverlap(fixed, '*' + 'a'.repeat(50) + 'b*'), false);
	});

	it('decides the overlap of common globs', () => {
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

	it('refuses a scope too costly to compare before it is stored, naming the limit', () => {
		const repro = '*a'.repeat(100) + '*{b,c,d,e,f,g,h,i}{j,k,l,m,n,o,p,q}A1';
		assert.equal(repro.length, 237);
		refused([repro], /has 101 "\*" in one segment; at most 8/);
		refused(
			Array.from({ length: 16 }, () => '*a'.repeat(124)),
			/"\*" in one segment; at most 8/,
		);
		refused(['src/{a..h}/{a..h}.ts', 'x/{a,b}/**'], /at most 64; this one has 66/);
		refused(
			Array.from({ length: 9 }, (_, i) => `${'d'.repeat(120)}/${i}`),
			/at most 1,024; this one has 1,107/,
		);
		assert.equal(checkScope(['src/*auth*/**/*.{ts,tsx}', '*a*b*c*d*e*f*g*h']).globs.length, 3);
	});

	it('reads a scope an older hub stored past the limits as meeting every scope of its project, comparing nothing', () => {
		// After an upgrade the report's two cards may still be stored: their claims must cost nothing.
		const repro = ['*a'.repeat(100) + '*{b,c,d,e,f,g,h,i}{j,k,l,m,n,o,p,q}A1'];
		const held = (cardId: string, project: string | null, entries: string[]) => ({
			cardId,
			holder: 'old-agent',
			title: cardId,
			project,
			entries,
		});
		const live = new LiveScopes([held('OLD-1', 'web', repro), held('B-1', 'web', ['docs/**'])]);
		const before = overlapSteps();
		assert.equal(live.conflict('web', repro, 'OLD-2')?.cardId, 'OLD-1', 'the costly claim holds up its project');
		assert.equal(live.conflict('web', ['src/x.ts'])?.cardId, 'OLD-1');
		assert.equal(live.conflict('api', repro), undefined, 'another project is untouched');
		assert.equal(new LiveScopes([held('B-1', 'web', ['docs/**'])]).conflict('web', repro)?.cardId, 'B-1');
		assert.equal(overlapSteps(), before, 'no glob was compared');
	});

	it('costs at most twice the product of two scopes’ characters, whatever their shape', () => {
		const pad = (i: number): string => String(i).padStart(2, '0');
		const shapes: [string, string[], string[]][] = [
			[
				'a long name against a long starred run that nearly fits everywhere',
				Array.from({ length: 4 }, (_, i) => 'a'.repeat(240) + pad(i)),
				Array.from({ length: 4 }, (_, i) => `*${'a'.repeat(115)}b*${'a'.repeat(115)}${pad(i)}*`),
			],
			[
				'classes against a starred run',
				Array.from({ length: 4 }, (_, i) => '[ac]'.repeat(60) + pad(i)),
				Array.from({ length: 4 }, (_, i) => `*${'a'.repeat(200)}b*${pad(i)}`),
			],
			['deep paths against globstars', ['**/' + 'a/'.repeat(120) + 'x'], ['a/**/'.repeat(48) + 'y']],
			[
				'64 globs without a literal lead against 64',
				Array.from({ length: 64 }, (_, i) => `**/*x${i}`),
				Array.from({ length: 64 }, (_, i) => `**/*y${i}*`),
			],
			['eight stars a segment', Array.from({ length: 8 }, (_, i) => `${'*ab'.repeat(8)}${i}`), ['*a*b*a*b*a*b*a*bq']],
		];
		for (const [what, a, b] of shapes) {
			const [sa, sb] = [checkScope(a), checkScope(b)]; // both within the limits
			const live = new LiveScopes([{ cardId: 'H', holder: 'h', title: 't', project: null, entries: b }]);
			const before = overlapSteps();
			live.conflict(null, a);
			const steps = overlapSteps() - before;
			const bound = 2 * scopeCharacters(sa.globs) * scopeCharacters(sb.globs);
			assert.ok(steps <= bound, `${what}: ${steps} steps, bound ${bound}`);
			assert.ok(bound <= 2 * scopeLimits.characters ** 2);
		}
	});
});
