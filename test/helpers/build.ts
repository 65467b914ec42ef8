/**
 * The bundle under test, for every test that runs the `baton` program as a process: where it is and
 * a rebuild when a source is newer. BATON_TEST_BATON_JS points at another build (then nothing is
 * rebuilt). Spawns only `node esbuild.mjs`; writes only dist/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '../..');
export const batonJs = process.env.BATON_TEST_BATON_JS ?? join(repoRoot, 'dist', 'baton.js');

/** Builds dist/ when dist/baton.js is missing or older than any source under core/ or mcp-server/. */
export function ensureBuilt(): void {
	if (process.env.BATON_TEST_BATON_JS !== undefined) {
		return;
	}
	const bundleTime = existsSync(batonJs) ? statSync(batonJs).mtimeMs : 0;
	const newest = Math.max(newestSource(join(repoRoot, 'core')), newestSource(join(repoRoot, 'mcp-server')));
	if (newest <= bundleTime) {
		return;
	}
	const r = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: repoRoot, encoding: 'utf8' });
	if (r.status !== 0) {
		throw new Error(`node esbuild.mjs failed:\n${r.stderr}`);
	}
}

function newestSource(dir: string): number {
	let newest = 0;
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) {
			newest = Math.max(newest, newestSource(path));
		} else if (entry.name.endsWith('.ts') || entry.name.endsWith('.sql')) {
			newest = Math.max(newest, statSync(path).mtimeMs);
		}
	}
	return newest;
}
