/**
 * Pause atomicity on real PostgreSQL: four claimer processes (test/helpers/pauseClaimer.ts)
 * claim and complete in a loop by every claim path — the hot claim, a claim by id, the general path,
 * complete {next}'s stored hand-over — while this process pauses and resumes the line (a project, then
 * everything) in rounds. Right after pause/set returns it reads the claimed events that exist; right
 * before the pause is cleared it reads them again: no claimed event of a paused card may be in the
 * second set and not in the first. The counts are printed. Processes and seconds of load, so it runs
 * in `npm run test:proofs`, not in the fast unit suite.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';

import type { OpContext } from '../../core/backlog';
import { openTestBacklog, testDatabaseUrl } from '../helpers/backlog';

const claimers = 4;
const cardCount = 4000;
const runMs = 10_000;
const human: OpContext = { actor: 'cli:alice' };

function runClaimer(schema: string, worker: number): Promise<string> {
	return new Promise((resolve, reject) => {
		const child = spawn(
			process.execPath,
			[
				'--import',
				'tsx',
				join(import.meta.dirname, '../helpers/pauseClaimer.ts'),
				testDatabaseUrl,
				schema,
				String(worker),
				String(cardCount),
				String(runMs),
			],
			{ stdio: ['ignore', 'pipe', 'inherit'] },
		);
		let out = '';
		child.stdout.on('data', (d: Buffer) => (out += d.toString()));
		child.on('error', reject);
		child.on('exit', code =>
			code === 0 ? resolve(out.trim()) : reject(new Error(`claimer ${worker} exited ${code}`)),
		);
	});
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

describe('pause atomicity on postgres', () => {
	it('grants no claim of a paused card once pause/set has returned, with claims racing on every path', async () => {
		const t = await openTestBacklog('postgres');
		try {
			const b = t.backlog;
			const schema = (t.options as { schema: string }).schema;
			for (let i = 0; i < cardCount; i += 500) {
				await b.create(human, {
					cards: Array.from({ length: 500 }, (_, k) => ({
						id: `c${i + k}`,
						title: `card ${i + k}`,
						priority: (i + k) % 5,
						project: (i + k) % 2 === 0 ? 'p' : 'q',
						labels: ['x'],
					})),
				});
			}
			const reader = new pg.Client({ connectionString: testDatabaseUrl });
			await reader.connect();
			await reader.query(`SET search_path TO "${schema}"`);
			/** Every claimed event that exists now: seq -> the card's project. */
			const claimedEvents = async (): Promise<Map<number, string>> => {
				const { rows } = await reader.query<{ seq: string; project: string }>(
					`SELECT e.seq, c.project FROM events e JOIN cards c ON c.id = e.card_id WHERE e.type = 'claimed'`,
				);
				return new Map(rows.map(r => [Number(r.seq), r.project]));
			};
			const running = Array.from({ length: claimers }, (_, w) => runClaimer(schema, w));
			const rounds: { scope: string; during: number; violations: string[] }[] = [];
			// The claimers start in their own time (tsx, a connection): begin once claims are flowing.
			while ((await claimedEvents()).size < 100) {
				await sleep(100);
			}
			const scopes = [
				{ scope: 'project' as const, target: 'p' },
				{ scope: 'all' as const },
				{ scope: 'project' as const, target: 'p' },
				{ scope: 'all' as const },
			];
			for (const s of scopes) {
				await b.pauses.set(human, { ...s, reason: 'proof' });
				const atReturn = await claimedEvents();
				await sleep(500);
				const beforeClear = await claimedEvents();
				await b.pauses.clear(human, s.scope === 'all' ? { scope: 'all' } : { scope: s.scope, target: s.target });
				const during = [...beforeClear].filter(([seq]) => !atReturn.has(seq));
				const violations = during
					.filter(([, project]) => s.scope === 'all' || project === 'p')
					.map(([seq, project]) => `seq ${seq} (${project})`);
				rounds.push({ scope: s.scope === 'all' ? 'all' : `project ${s.target}`, during: during.length, violations });
				await sleep(300);
			}
			const counts = (await Promise.all(running)).map(line => JSON.parse(line) as Record<string, number>);
			const total = counts.reduce((sum, c) => sum + (c.claimed ?? 0) + (c.handedOver ?? 0), 0);
			console.log(`claims granted: ${total}; per claimer: ${JSON.stringify(counts)}`);
			for (const r of rounds) {
				console.log(
					`pause of ${r.scope}: ${r.during} claims granted while paused, ${r.violations.length} of paused cards`,
				);
			}
			assert.ok(total > 200, `the claimers raced (${total} claims)`);
			assert.ok(
				rounds.some(r => r.scope !== 'all' && r.during > 0),
				'claims of unpaused cards went on during a project pause',
			);
			assert.deepEqual(
				rounds.flatMap(r => r.violations),
				[],
			);
			await reader.end();
		} finally {
			await t.cleanup();
		}
	});
});
