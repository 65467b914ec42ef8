/**
 * `node scripts/testSuite.mjs <folder> [concurrency]`: runs a folder's `*.test.ts` files with node:test,
 * two at a time (or `concurrency`) except the files whose opening doc comment carries an `@serial`
 * line, which run afterwards one at a time: their liveness bounds (an answer within 1 s while the hub
 * is flooded, a snapshot within 30 s of a lease running out) are what they prove, and a second test
 * file on the other core would stretch them. Every test process runs with `--liftoff-only` (PGlite's
 * WASM compiled once, by V8's baseline compiler: test/helpers/v8Flags.ts). Exits with the first
 * failing run's code. Must not choose, skip or reorder tests within a file.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [folder, concurrencyArg] = process.argv.slice(2);
if (folder === undefined) {
	console.error('usage: node scripts/testSuite.mjs <folder> [concurrency]');
	process.exit(2);
}
const concurrency = Number(concurrencyArg ?? 2);
const files = readdirSync(folder)
	.filter(name => name.endsWith('.test.ts'))
	.sort()
	.map(name => join(folder, name));
const isSerial = file => /^\s*\*\s*@serial\b/m.test(readFileSync(file, 'utf8').split('*/')[0] ?? '');
const serial = files.filter(isSerial);
const together = files.filter(file => !serial.includes(file));

/** One node:test run over `list`; its exit status. */
function run(list, n) {
	if (list.length === 0) {
		return 0;
	}
	console.log(`── ${list.length} files, ${n} at a time`);
	const args = ['--liftoff-only', '--import', 'tsx', '--test', `--test-concurrency=${n}`, ...list];
	const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
	return r.status ?? 1;
}

const first = run(together, concurrency);
const second = run(serial, 1);
process.exit(first !== 0 ? first : second);
