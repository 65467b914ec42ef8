/**
 * Real small disks for tests of full-disk behaviour: a tmpfs of a given size mounted on a fresh
 * folder (needs root, as CI runs; `tmpfsSkip` says why a developer's run as another user skips),
 * unmounted and removed after, and a ballast file that fills one up to a chosen free space.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { freeBytes } from '../../core/files/diskSpace';

/** Outside CI, a user who cannot mount skips these proofs (loudly); on CI they must run. */
export const tmpfsSkip =
	process.env.CI !== 'true' && process.getuid?.() !== 0 ? 'mounting a tmpfs needs root (CI runs these as root)' : false;

/** A tmpfs of `sizeMb` on `at` (created) or a fresh folder; fails (never skips) when it cannot be mounted. */
export function mountTmpfs(sizeMb: number, at?: string): string {
	const dir = at ?? mkdtempSync('/tmp/bt-fs-');
	mkdirSync(dir, { recursive: true });
	try {
		execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
	} catch (e) {
		throw new Error(
			`This test needs to mount a ${sizeMb} MB tmpfs (run as root, as CI does): ${(e as { stderr?: Buffer }).stderr?.toString().trim() ?? String(e)}`,
		);
	}
	return dir;
}

export function unmount(dir: string): void {
	try {
		execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
	} catch {
		// Not mounted any more.
	}
	rmSync(dir, { recursive: true, force: true });
}

/** Fills `dir`'s filesystem with a ballast file until only `leaveBytes` are free. */
export function fillUntil(dir: string, leaveBytes: number): string {
	const path = join(dir, 'ballast');
	const size = Math.max(0, freeBytes(dir) - leaveBytes);
	writeFileSync(path, Buffer.alloc(size));
	return path;
}
