/**
 * The upgrade gate of core/store/pgliteInternals.ts: the PGlite installed and the one package.json
 * pins are exactly the version whose internals the kept fast paths were checked against. Moving to
 * another PGlite fails here until someone re-checks that list and moves the three together.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';

import { pgliteInternalsCheckedWith } from '../../core/store/pgliteInternals';

const root = join(__dirname, '..', '..');

function versionOf(packageJson: string): unknown {
	return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown }).version;
}

describe('PGlite internals gate', () => {
	it('pins the PGlite whose internals the fast paths were checked against, and that one is installed', () => {
		// A devDependency: the package ships it bundled in dist/, so it has no runtime dependencies.
		const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
			devDependencies?: Record<string, string>;
		};
		assert.equal(
			pkg.devDependencies?.['@electric-sql/pglite'],
			pgliteInternalsCheckedWith,
			'package.json must pin @electric-sql/pglite exactly (no range) to the version in core/store/pgliteInternals.ts',
		);
		// The package's exports hide its package.json; find it above the resolved entry point.
		let dir = dirname(require.resolve('@electric-sql/pglite'));
		while (!dir.endsWith(join('@electric-sql', 'pglite')) && dir !== dirname(dir)) {
			dir = dirname(dir);
		}
		assert.equal(versionOf(join(dir, 'package.json')), pgliteInternalsCheckedWith);
	});
});
