/**
 * Crash proof (RELIABILITY 4–6): a child writing cards (one transaction per card and its event,
 * and a claim+complete through the hot path after every second card, printing each acknowledged
 * write) is killed with SIGKILL at random moments, more than 20 times, some
 * of them while it is still opening the store. After each kill the next open must succeed, every
 * acknowledged id must be there and no card may lack its event; at the end amcheck checks every
 * index. Killing during the very first init (template load) must leave a dir the next start recovers.
 * It starts some 25 writer processes, so it runs in `npm run test:proofs`, not in the fast unit suite.
 * @first the longest proof: 25 writers started one after another.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { initMarker, readyMarker } from '../../core/store/dataDir';
import { tempDir } from '../helpers/backlog';
import { amcheckIndexes } from '../helpers/hub';
import { testNodeArgs } from '../helpers/v8Flags';

const writer = join(__dirname, 'crashWriter.ts');

interface Run {
	child: ChildProcess;
	lines: string[];
	/** Resolves with the first line that starts with `prefix` (and ends with `suffix`). */
	waitFor(prefix: string, suffix?: string): Promise<string>;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function start(dir: string, run: number, ackedFile: string, onAck: (id: string) => void): Run {
	const child = spawn(process.execPath, [...testNodeArgs, '--import', 'tsx', writer, dir, String(run), ackedFile], {
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const lines: string[] = [];
	const waiters: { prefix: string; suffix: string; resolve: (line: string) => void }[] = [];
	let buffer = '';
	let stderr = '';
	child.stdout.on('data', (chunk: Buffer) => {
		buffer += chunk.toString('utf8');
		let nl = buffer.indexOf('\n');
		while (nl >= 0) {
			const line = buffer.slice(0, nl);
			buffer = buffer.slice(nl + 1);
			lines.push(line);
			if (line.startsWith('ACK ')) {
				onAck(line.slice(4));
			}
			for (const w of waiters.filter(x => line.startsWith(x.prefix) && line.endsWith(x.suffix))) {
				w.resolve(line);
			}
			nl = buffer.indexOf('\n');
		}
	});
	child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(resolve =>
		child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
	);
	return {
		child,
		lines,
		exited,
		waitFor(prefix: string, suffix = '') {
			const seen = lines.find(l => l.startsWith(prefix) && l.endsWith(suffix));
			if (seen !== undefined) {
				return Promise.resolve(seen);
			}
			return new Promise((resolve, reject) => {
				waiters.push({ prefix, suffix, resolve });
				void exited.then(e =>
					reject(new Error(`writer exited (${String(e.code)}/${String(e.signal)}) before "${prefix}": ${e.stderr}`)),
				);
			});
		},
	};
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms));
const randomBetween = (min: number, max: number): number => min + Math.floor(Math.random() * (max - min));

describe('crash durability (PGlite)', () => {
	it('survives 20 random SIGKILLs while writing or opening: every ACKed write is there, every card has its event', async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		const ackedFile = join(root, 'acked.txt');
		writeFileSync(ackedFile, '');
		let acked = 0;
		let completed = 0;
		let verified = 0;
		let killsWhileOpening = 0;
		let killsWhileWriting = 0;
		const opens: number[] = [];
		try {
			const kills = 20;
			for (let run = 0; run <= kills; run++) {
				const r = start(dir, run, ackedFile, id => {
					appendFileSync(ackedFile, `${id}\n`);
					if (id.endsWith(':done')) {
						completed++;
					} else {
						acked++;
					}
				});
				const openingKill = run > 0 && run % 4 === 0;
				if (openingKill) {
					// Somewhere in start-up: PGlite open, WAL replay, or the first writes.
					await r.waitFor('START');
					await sleep(randomBetween(0, 1500));
				} else {
					const open = await r.waitFor('OPEN ');
					opens.push(Number(open.slice(5)));
					if (run > 0) {
						const [, total, , missing, orphans, sample] = (await r.waitFor('VERIFY ')).split(' ');
						assert.equal(missing, '0', `run ${run}: ACKed writes missing after a kill, e.g. ${sample ?? ''}`);
						assert.equal(orphans, '0', `run ${run}: cards without their created event`);
						verified += Number(total);
					}
					if (run === kills) {
						r.child.kill('SIGTERM');
						await r.exited;
						break;
					}
					// The first writer runs until it has claimed and completed once, so the hot path is
					// exercised however slow the machine; the others are killed after any write.
					await r.waitFor('ACK ', run === 0 ? ':done' : '');
					await sleep(randomBetween(20, 400));
				}
				const wasOpen = r.lines.some(l => l.startsWith('ACK '));
				r.child.kill('SIGKILL');
				const exit = await r.exited;
				assert.equal(exit.signal, 'SIGKILL', `run ${run} ended on its own: ${exit.stderr}`);
				if (wasOpen) {
					killsWhileWriting++;
				} else {
					killsWhileOpening++;
				}
			}
			// The final check in this process: open, compare, close; then amcheck every index.
			const backlog = await Backlog.open({ pgliteDir: dir });
			const stats = await backlog.stats({ actor: 'test' }, {});
			await backlog.close();
			assert.ok(stats.total >= acked, `${stats.total} cards stored, ${acked} acknowledged`);
			const indexes = await amcheckIndexes(dir);
			console.log(
				`crash: ${killsWhileWriting + killsWhileOpening} SIGKILLs (${killsWhileWriting} while writing, ${killsWhileOpening} while opening); ` +
					`${acked} ACKed creates and ${completed} ACKed claim+completes, all present at every reopen (${verified} checks), ${stats.total} cards stored, 0 without events; ` +
					`amcheck clean on ${indexes} indexes; reopen after a kill ${Math.min(...opens)}–${Math.max(...opens)} ms`,
			);
			assert.ok(killsWhileWriting + killsWhileOpening >= 20);
			assert.ok(completed > 0, 'the hot claim+complete path was exercised');
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('recovers from a kill during the very first init, by setting the partial dir aside, never looping', async () => {
		const root = tempDir();
		const ackedFile = join(root, 'none.txt');
		let recovered = 0;
		let partials = 0;
		try {
			for (let i = 0; i < 3; i++) {
				const dir = join(root, `first${i}`);
				const r = start(dir, i, ackedFile, () => undefined);
				// Kill somewhere in the first init (template load, migrations) or just after it.
				await r.waitFor('START');
				await sleep(randomBetween(0, 3000));
				r.child.kill('SIGKILL');
				await r.exited;
				const halfMade = existsSync(join(dir, initMarker)) && !existsSync(join(dir, readyMarker));
				const again = start(dir, 100 + i, ackedFile, () => undefined);
				await again.waitFor('ACK ');
				again.child.kill('SIGKILL');
				await again.exited;
				assert.ok(existsSync(join(dir, readyMarker)));
				assert.ok(!existsSync(join(dir, initMarker)), 'the init marker goes once the dir is ready');
				const aside = readdirSync(root).filter(f => f.startsWith(`first${i}.partial-`));
				if (halfMade) {
					partials++;
					assert.equal(aside.length, 1, 'the half-made dir is kept aside, timestamped, for inspection');
				} else {
					assert.deepEqual(aside, [], 'a dir that was not half-made is never set aside');
				}
				recovered++;
			}
			// A store that lost its marker and is damaged is Baton's to refuse, never to replace.
			const junk = join(root, 'junk');
			const j = start(junk, 7, ackedFile, () => undefined);
			await j.waitFor('ACK ');
			j.child.kill('SIGKILL');
			await j.exited;
			rmSync(join(junk, readyMarker));
			writeFileSync(join(junk, 'PG_VERSION'), 'garbage');
			const before = readdirSync(junk);
			await assert.rejects(Backlog.open({ pgliteDir: junk }), (e: unknown) => BatonError.is(e, 'store_refused'));
			assert.deepEqual(readdirSync(junk), before, 'the damaged store is left as it was');
			assert.deepEqual(
				readdirSync(root).filter(f => f.startsWith('junk.')),
				[],
			);
			console.log(
				`first init: ${recovered} kills during first init recovered (${partials} left a partial dir, set aside); damaged unmarked store refused, untouched`,
			);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});
});
