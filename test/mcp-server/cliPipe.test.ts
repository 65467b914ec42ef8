/**
 * The CLI and a reader that goes away: output to a pipe closed early (`| head -c 300`)
 * ends the command quietly with its usual exit code instead of an unhandled `write EPIPE` stack; and
 * `baton hub --help` prints the hub's help and exits 0.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { batonJs, childEnv, cleanupDataDir, ensureBuilt, runBaton, tempDataDir } from '../helpers/mcp';

describe('CLI output to a closed pipe', () => {
	let dataDir: string;

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		// More than a pipe buffer (64 KiB) of JSON, so the writer meets the closed end.
		const cards = Array.from({ length: 20 }, (_, i) => ({
			title: `c${i}`,
			body: randomBytes(9_000).toString('base64'),
		}));
		const r = await runBaton(['create', '--file', '-'], { dataDir, input: JSON.stringify(cards) });
		assert.equal(r.code, 0, r.stderr);
	});
	after(() => cleanupDataDir(dataDir));

	for (const command of ['list --json', 'agents --json', 'export']) {
		it(`baton ${command} | head -c 300 ends quietly with exit 0`, () => {
			const r = spawnSync(
				'bash',
				['-c', `set -o pipefail; "${process.execPath}" "${batonJs}" ${command} | head -c 300 >/dev/null`],
				{ env: childEnv(dataDir), encoding: 'utf8', timeout: 30_000 },
			);
			assert.equal(r.stderr, '', 'nothing on stderr');
			assert.equal(r.status, 0);
		});
	}
});

describe('baton hub --help', () => {
	it('prints the hub usage and exits 0', () => {
		ensureBuilt();
		for (const flag of ['--help', '-h']) {
			const r = spawnSync(process.execPath, [batonJs, 'hub', flag], { encoding: 'utf8', timeout: 30_000 });
			assert.equal(r.status, 0, r.stderr);
			assert.match(r.stdout, /^Usage: baton hub \[--data-dir DIR\]/);
			assert.equal(r.stderr, '');
		}
	});
});
