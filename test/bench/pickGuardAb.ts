/**
 * A/B of dispatch's extra conditions on the hot claim's pick, in one process on PGlite (and PostgreSQL
 * with --postgres), alternating the two statements so a busy machine slows both alike: the pick as it
 * was (claimable, capabilities, phase, project, claim order) against the pick with the line's checks
 * (no pause, the assignee, aging off, under maxHeld), with no pause, assignment or setting present.
 * Prints the p50 and mean of each. Standalone: `node --import tsx test/bench/pickGuardAb.ts [--postgres]`.
 */
import { type Backlog } from '../../core/backlog';
import { claimableSql, hotGuardSql, lineOpenSql, ofProjectSql } from '../../core/backlog/claimableSql';
import { claimOrder } from '../../core/backlog/paging';
import type { Db } from '../../core/store/db';
import { openTestBacklog } from '../helpers/backlog';

const postgres = process.argv.includes('--postgres');
const cards = 10_000;
const rounds = 4000;

const before = `SELECT id FROM cards WHERE ${claimableSql('$1')} AND requires <@ $2::text[] AND $3::text IS NULL
	AND ${ofProjectSql('$4')} ORDER BY ${claimOrder} LIMIT 1`;
const after = `SELECT id FROM cards WHERE ${claimableSql('$1')} AND requires <@ $2::text[] AND ${lineOpenSql('$5', '$6')}
	AND $3::text IS NULL AND ${ofProjectSql('$4')} AND ${hotGuardSql} ORDER BY ${claimOrder} LIMIT 1`;

async function main(): Promise<void> {
	const t = await openTestBacklog(postgres ? 'postgres' : 'pglite');
	const b: Backlog = t.backlog;
	try {
		for (let i = 0; i < cards; i += 1000) {
			await b.create(
				{ actor: 'bench' },
				{ cards: Array.from({ length: 1000 }, (_, k) => ({ title: `card ${i + k}`, priority: (i + k) % 7 })) },
			);
		}
		const db = (b as unknown as { db: Db }).db;
		const now = new Date();
		const a = async (): Promise<number> => {
			const s = performance.now();
			await db.query(before, [now, [], null, '*'], 'ab_before');
			return performance.now() - s;
		};
		const c = async (): Promise<number> => {
			const s = performance.now();
			await db.query(after, [now, [], null, '*', 'bench', null], 'ab_after');
			return performance.now() - s;
		};
		const ta: number[] = [];
		const tc: number[] = [];
		for (let i = 0; i < 200; i++) {
			await a();
			await c();
		}
		for (let i = 0; i < rounds; i++) {
			if (i % 2 === 0) {
				ta.push(await a());
				tc.push(await c());
			} else {
				tc.push(await c());
				ta.push(await a());
			}
		}
		const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
		const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
		console.log(
			`${postgres ? 'postgres' : 'pglite'} pick, ${cards} cards, ${rounds} each: before p50 ${p50(ta).toFixed(3)} ms mean ${mean(ta).toFixed(3)} ms; ` +
				`with the line's checks p50 ${p50(tc).toFixed(3)} ms mean ${mean(tc).toFixed(3)} ms`,
		);
	} finally {
		await t.cleanup();
	}
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
