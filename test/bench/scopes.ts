/**
 * What scopes cost a claim (target: "claim p50 at 100k cards with 200 live claims of 5 globs each
 * stays ≤ 2× the claim without scopes"). Two PGlite backlogs of the benchmark data set (dataset.ts),
 * in process: one as it is, one where every card has a scope of 5 globs (a folder, a file, tests, a
 * doc, a lock, over 10,000 modules: two cards meet when they share a module). Each gets 200 live
 * claims by 200 agents, then one agent claims and completes, round after round, alternating the two
 * backlogs so both see the same machine load. Reported: claim p50/p95 of each and their ratio, and the
 * pure overlap check of one candidate against the 200 live scopes (core/scope/conflicts.ts).
 * Standalone: `node --import tsx test/bench/scopes.ts [--quick]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { Backlog } from '../../core/backlog';
import type { CreateCardInput } from '../../core/protocol';
import { type HeldScope, LiveScopes } from '../../core/scope/conflicts';
import { prng } from '../helpers/prng';
import { cardBatches } from './dataset';
import { median, percentile, Reporter, row } from './report';

const quick = process.argv.includes('--quick');
const size = quick ? 10_000 : 100_000;
const liveClaims = 200;
const rounds = quick ? 200 : 1_000;
const modules = 10_000;

/** Five globs over one module: two cards meet when they share a module (or the lock). */
function scopeOf(random: () => number): string[] {
	const m = Math.floor(random() * modules);
	return [`src/m${m}/**`, `lib/m${m}.ts`, `test/m${m}/*.test.ts`, `docs/m${m}.md`, `lock:m${m}`];
}

async function open(dir: string, scoped: boolean): Promise<Backlog> {
	const backlog = await Backlog.open({ pgliteDir: dir });
	const random = prng(7);
	for (const batch of cardBatches(size)) {
		const cards: CreateCardInput[] = scoped ? batch.map(c => ({ ...c, scope: scopeOf(random) })) : batch;
		await backlog.create({ actor: 'bench' }, { cards });
	}
	for (let i = 0; i < liveClaims; i++) {
		const { card } = await backlog.claim({ actor: `holder-${i}` }, { ttlSeconds: 3600 });
		if (card === null) {
			throw new Error('not enough claimable cards for the live claims');
		}
	}
	return backlog;
}

/** µs of one candidate's overlap check against the live scopes, in process. */
function checkCost(): number {
	const random = prng(11);
	const held: HeldScope[] = Array.from({ length: liveClaims }, (_, i) => ({
		cardId: `h${i}`,
		holder: `holder-${i}`,
		title: 'held',
		project: null,
		entries: scopeOf(random),
	}));
	const live = new LiveScopes(held);
	const candidates = Array.from({ length: 2_000 }, () => scopeOf(random));
	let conflicts = 0;
	const t = performance.now();
	for (const c of candidates) {
		conflicts += live.conflict(null, c) === undefined ? 0 : 1;
	}
	const us = ((performance.now() - t) * 1000) / candidates.length;
	if (conflicts > candidates.length / 10) {
		throw new Error(`${conflicts} conflicts: the data set is not the intended one`);
	}
	return us;
}

async function main(): Promise<void> {
	const report = new Reporter('scopes');
	const temp = mkdtempSync('/tmp/bt-scopes-');
	const backlogs: Backlog[] = [];
	try {
		report.add(
			row(
				`overlap check of one 5-glob scope against ${liveClaims} live scopes (in process)`,
				checkCost(),
				'µs',
				undefined,
				'core/scope/conflicts.ts, literal leads pruned, memoised parse',
			),
		);
		const plain = await open(join(temp, 'plain'), false);
		backlogs.push(plain);
		const scoped = await open(join(temp, 'scoped'), true);
		backlogs.push(scoped);
		const samples: Record<'plain' | 'scoped', number[]> = { plain: [], scoped: [] };
		const ctx = { actor: 'bench-agent' };
		for (let i = 0; i < rounds; i++) {
			// A B B A: neighbouring samples share the machine's load.
			const order: ('plain' | 'scoped')[] = i % 2 === 0 ? ['plain', 'scoped'] : ['scoped', 'plain'];
			for (const which of order) {
				const b = which === 'plain' ? plain : scoped;
				const t = performance.now();
				const { card, lease } = await b.claim(ctx, {});
				samples[which].push(performance.now() - t);
				if (card === null || lease === null) {
					throw new Error(`${which}: nothing claimable`);
				}
				await b.complete(ctx, { cardId: card.id, epoch: lease.epoch });
			}
		}
		const p50 = { plain: median(samples.plain), scoped: median(samples.scoped) };
		const scale = `${size.toLocaleString('en')} cards, ${liveClaims} live claims`;
		report.add(row(`claim p50 without scopes (${scale})`, p50.plain, 'ms'));
		report.add(row('claim p95 without scopes', percentile(samples.plain, 95), 'ms'));
		report.add(row(`claim p50 with 5-glob scopes on every card (${scale} of 5 globs)`, p50.scoped, 'ms'));
		report.add(row('claim p95 with scopes', percentile(samples.scoped, 95), 'ms'));
		report.add(
			row(
				'claim p50 with scopes ÷ without',
				p50.scoped / p50.plain,
				'×',
				{ max: 2 },
				`${rounds} claims each, alternating`,
			),
		);
	} finally {
		for (const b of backlogs) {
			await b.close();
		}
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
