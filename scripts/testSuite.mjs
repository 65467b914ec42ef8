/**
 * `node scripts/testSuite.mjs <folder>… [--concurrency=N]`: runs the folders' `*.test.ts` files with
 * node:test, two at a time (or N). A file whose opening doc comment carries an `@serial` line runs
 * afterwards, alone: its liveness bounds (an answer within 1 s while the hub is flooded, a release
 * within 2 s of an agent's death) are what it proves, and a second test file on the other core would
 * stretch them. Bounds many times what the event takes (a 30 s wait for a snapshot after a 5 s lease)
 * do not need it. A file marked `@first` (one that takes far longer than the rest) starts first, so
 * the others fill the other core beside it instead of leaving it to run alone at the end. Every test
 * process runs with `--liftoff-only` (PGlite's WASM compiled once, by V8's baseline compiler:
 * test/helpers/v8Flags.ts). Exits with the first failing run's code. Must not choose, skip or reorder
 * the tests within a file.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const folders = args.filter(arg => !arg.startsWith('--'));
const concurrency = Number(
	/^--concurrency=(\d+)$/.exec(args.find(arg => arg.startsWith('--concurrency=')) ?? '')?.[1] ?? 2,
);
if (folders.length === 0) {
	console.error('usage: node scripts/testSuite.mjs <folder>… [--concurrency=N]');
	process.exit(2);
}
const files = folders.flatMap(folder =>
	readdirSync(folder)
		.filter(name => name.endsWith('.test.ts'))
		.sort()
		.map(name => join(folder, name)),
);
/** The tags (`@serial`, `@first`) of a file's opening doc comment. */
const tagged = (file, tag) =>
	new RegExp(`^\\s*\\*\\s*@${tag}\\b`, 'm').test(readFileSync(file, 'utf8').split('*/')[0] ?? '');
const serial = files.filter(file => tagged(file, 'serial'));
const rest = files.filter(file => !serial.includes(file));
const together = [...rest.filter(file => tagged(file, 'first')), ...rest.filter(file => !tagged(file, 'first'))];

/** One node:test run over `list`; its exit status. */
function run(list, n) {
	if (list.length === 0) {
		return 0;
	}
	console.log(`── ${list.length} files, ${n} at a time`);
	const nodeArgs = ['--liftoff-only', '--import', 'tsx', '--test', `--test-concurrency=${n}`, ...list];
	const r = spawnSync(process.execPath, nodeArgs, { stdio: 'inherit' });
	return r.status ?? 1;
}

const first = run(together, concurrency);
const second = run(serial, 1);
process.exit(first !== 0 ? first : second);
