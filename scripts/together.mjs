/**
 * `node scripts/together.mjs a b …`: runs the npm scripts a, b, … at the same time and exits with the
 * first failure's code (0 when all pass). The first script's output streams as it comes; the others'
 * is held and printed whole when each ends, so no two suites' lines interleave. `npm test` uses it to
 * run the static check (tsc, ESLint and Prettier, one at a time) and the proofs (one writer or a few
 * claimers at a time) beside the unit suite (two files at a time): none of the three has a liveness
 * bound, and together they keep both of this machine's cores busy where each alone leaves one idle
 * part of the time. It must not be used for suites with liveness bounds that a second busy core would
 * stretch (the MCP suite's @serial files, the board's and VS Code's "within 500 ms / 1 s" cases).
 */
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) {
	console.error('usage: node scripts/together.mjs <npm script> [<npm script> …]');
	process.exit(2);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const runs = names.map(
	(name, i) =>
		new Promise(resolve => {
			const child = spawn(npm, ['run', '--silent', name], { stdio: i === 0 ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
			const held = [];
			child.stdout?.on('data', chunk => held.push(chunk));
			child.stderr?.on('data', chunk => held.push(chunk));
			child.on('close', (code, signal) => {
				if (held.length > 0) {
					process.stdout.write(`\n── npm run ${name} ──\n`);
					process.stdout.write(Buffer.concat(held));
				}
				const status = code ?? (signal === null ? 1 : 128);
				console.log(`── npm run ${name}: ${status === 0 ? 'passed' : `failed (${signal ?? `exit ${status}`})`}`);
				resolve(status);
			});
		}),
);
const codes = await Promise.all(runs);
process.exit(codes.find(code => code !== 0) ?? 0);
