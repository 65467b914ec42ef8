/**
 * What each part of the hot claim and complete costs (docs/benchmarks.md, Findings): one PGlite backlog
 * of the benchmark data set in this process, claim+complete pairs through the real hot statements
 * (hotSql.ts, over the same wire path), alternating between variants that each leave one part out, so
 * a busy machine slows every variant alike. Variants are measurement only: they drop a rule the
 * backlog needs (the tree refusal, the dispatch guards, fields of the card) or put back what was
 * before (the count rows written by the row trigger instead of the statement: migration 0027), and
 * nothing here is a candidate to ship as it is. Prints, for the claim and the complete of each variant,
 * the wall time's p10 and p50 and the process's CPU per call (steadier on a busy machine).
 * Standalone: `node --import tsx test/bench/hotPartsAb.ts [cards] [pairs per variant] [--only 0,4]`.
 */
import { loadavg } from 'node:os';

import { type Backlog } from '../../core/backlog';
import { hotGuardSql, lineOpenSql } from '../../core/backlog/claimableSql';
import { sqlCatalogue } from '../../core/backlog/hotSql';
import type { Db } from '../../core/store/db';
import { openTestBacklog } from '../helpers/backlog';
import { cardBatches } from './dataset';

const cards = Number(process.argv[2] ?? 20_000);
const pairs = Number(process.argv[3] ?? 600);
/** `--only 0,4`: just these variants (their indexes in the list below). */
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? (process.argv[onlyAt + 1] ?? '').split(',').map(Number) : undefined;

/** The card's fields before parents, workspaces and dispatch added theirs (functions.sql at 56002e7). */
const liteCard = `CREATE OR REPLACE FUNCTION baton_card_lite(c cards) RETURNS json LANGUAGE sql STABLE AS $$
	SELECT json_build_object(
		'id', c.id, 'title', c.title, 'body', c.body, 'phase', c.phase, 'priority', c.priority,
		'status', c.status, 'requires', c.requires, 'dependsOn', c.depends_on,
		'unmetDeps', c.unmet_deps, 'claimOwner', c.claim_owner, 'claimedAt', baton_ts(c.claimed_at),
		'leaseExpiresAt', baton_ts(c.lease_expires_at), 'leaseSeconds', c.lease_ttl_seconds,
		'claimEpoch', c.claim_epoch,
		'attempts', c.attempts, 'maxAttempts', c.max_attempts, 'deferUntil', baton_ts(c.defer_until),
		'progress', c.progress, 'progressNote', c.progress_note, 'progressAt', baton_ts(c.progress_at),
		'result', c.result, 'blockedReason', c.blocked_reason, 'failed', c.failed,
		'backoffSeconds', c.backoff_seconds, 'stallReleaseSeconds', c.stall_release_seconds,
		'idempotencyKey', c.idempotency_key,
		'review', c.review, 'completedBy', c.completed_by, 'handoff', c.handoff, 'needsInput', c.needs_input,
		'project', c.project, 'scope', c.scope, 'reserved', c.reserved,
		'acceptance', c.acceptance, 'version', c.version,
		'createdAt', baton_ts(c.created_at), 'updatedAt', baton_ts(c.updated_at)
	)
$$`;

interface Variant {
	name: string;
	claim: string;
	complete: string;
}

function mustReplace(text: string, from: string | RegExp, to: string): string {
	const out = text.replace(from, to);
	if (out === text) {
		throw new Error(`variant text not found: ${String(from).slice(0, 80)}`);
	}
	return out;
}

function variants(): Variant[] {
	const sql = sqlCatalogue('pglite').sql;
	const now: Variant = { name: 'as now', claim: sql.claim, complete: sql.complete };
	const noGuard = mustReplace(
		mustReplace(sql.claim, ` AND ${lineOpenSql('$4', '$10')}`, ' AND ($10::text IS NULL OR true)'),
		` AND ${hotGuardSql}`,
		'',
	);
	const noTree = mustReplace(
		sql.complete,
		/ AND parent IS NULL\s+AND open_children = 0 AND NOT EXISTS \(SELECT 1 FROM edges e JOIN cards d ON d\.id = e\.card_id WHERE [^)]*\)\)/,
		'',
	);
	// The complete whose count rows the row trigger writes (before migration 0027's mark).
	const byTrigger = (s: string): string =>
		mustReplace(
			mustReplace(s, / AND set_config\('baton\.counted', 'on', true\) = 'on'/, ''),
			/counted AS \([\s\S]*?AS k\(bucket, waiting, n\)\s*\),/,
			'',
		);
	// No counts at all, as before migration 0012: the mark keeps the trigger off, no rows are written.
	const uncounted = mustReplace(sql.complete, /counted AS \([\s\S]*?AS k\(bucket, waiting, n\)\s*\),/, '');
	const lite = (s: string): string => mustReplace(s, /baton_card\(cards\)/g, 'baton_card_lite(cards)');
	return [
		now,
		{ name: 'no dispatch guards on the pick', claim: noGuard, complete: sql.complete },
		{ name: 'no tree refusal in the complete', claim: sql.claim, complete: noTree },
		{ name: 'the card as before 31/33/30', claim: lite(sql.claim), complete: lite(sql.complete) },
		{ name: 'counts by the row trigger', claim: sql.claim, complete: byTrigger(sql.complete) },
		{ name: 'before: all four', claim: lite(noGuard), complete: byTrigger(lite(noTree)) },
		{ name: 'no count rows at all (before 0012)', claim: sql.claim, complete: uncounted },
	];
}

async function main(): Promise<void> {
	const t = await openTestBacklog('pglite');
	const b: Backlog = t.backlog;
	try {
		for (const batch of cardBatches(cards)) {
			await b.create({ actor: 'bench' }, { cards: batch });
		}
		const db = (b as unknown as { db: Db }).db;
		await db.exec(liteCard);
		const vs = variants().filter((_, i) => only === undefined || only.includes(i));
		const claimMs = vs.map(() => [] as number[]);
		const completeMs = vs.map(() => [] as number[]);
		const claimCpu = vs.map(() => [] as number[]);
		const completeCpu = vs.map(() => [] as number[]);
		const pair = async (i: number, timed: boolean): Promise<void> => {
			const v = vs[i]!;
			const now = new Date();
			const c0 = process.cpuUsage();
			const t0 = performance.now();
			const rows = await db.query<{ card: { id: string; claimEpoch: number } }>(
				v.claim,
				[now, [], null, 'bench', new Date(now.getTime() + 600_000), 600, null, '*', null, null],
				`ab_claim_${i}`,
			);
			const t1 = performance.now();
			const c1 = process.cpuUsage(c0);
			const card = rows[0]?.card;
			if (card === undefined) {
				throw new Error('nothing claimed');
			}
			const done = await db.query(
				v.complete,
				[now, card.id, 'bench', null, card.claimEpoch, null, null],
				`ab_complete_${i}`,
			);
			const t2 = performance.now();
			const c2 = process.cpuUsage(c0);
			if (done.length !== 1) {
				throw new Error(`${v.name}: the complete of ${card.id} was refused`);
			}
			if (timed) {
				claimMs[i]!.push(t1 - t0);
				completeMs[i]!.push(t2 - t1);
				claimCpu[i]!.push((c1.user + c1.system) / 1000);
				completeCpu[i]!.push((c2.user + c2.system - c1.user - c1.system) / 1000);
			}
		};
		for (let r = 0; r < 50; r++) {
			for (let i = 0; i < vs.length; i++) {
				await pair(i, false);
			}
		}
		for (let r = 0; r < pairs; r++) {
			// Rotate the order each round so no variant always runs right after the same one.
			for (let k = 0; k < vs.length; k++) {
				await pair((k + r) % vs.length, true);
			}
		}
		const at = (xs: number[], q: number) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length * q)] ?? 0;
		const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
		console.log(
			`PGlite, ${cards} cards, ${pairs} pairs per variant, alternating; wall p10 / p50 and CPU per call p50 / mean, ms; load ${loadavg()[0]!.toFixed(1)}`,
		);
		vs.forEach((v, i) => {
			const f = (wall: number[], cpu: number[]) =>
				`${at(wall, 0.1).toFixed(3)} / ${at(wall, 0.5).toFixed(3)}  cpu ${at(cpu, 0.5).toFixed(3)} / ${mean(cpu).toFixed(3)}`;
			console.log(
				`${v.name.padEnd(34)} claim ${f(claimMs[i]!, claimCpu[i]!)}   complete ${f(completeMs[i]!, completeCpu[i]!)}`,
			);
		});
	} finally {
		await t.cleanup();
	}
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
