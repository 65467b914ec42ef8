/**
 * The hub's timers and housekeeping: when the next lease runs out or the stall policy next releases a
 * claim (the reaper), when the next deferred card becomes claimable (waiting claims), and the periodic
 * clean-up. Reads and prunes only; reclaiming is claimEnds.ts's.
 */
import { foldCounts } from './counts';
import { stallSecondsSql } from './settings';
import type { UnitOfWork } from './unitOfWork';

const requestLogDays = 1;

export class Upkeep {
	constructor(private readonly uow: UnitOfWork) {}

	/**
	 * When the next lease runs out or the stall policy next releases a claim (the hub's reaper sets an
	 * exact timer for it).
	 */
	async nextLeaseExpiry(): Promise<Date | null> {
		const rows = await this.uow.db.query<{ at: Date | null }>(
			`SELECT least(min(lease_expires_at), min(CASE WHEN seconds > 0 THEN since + make_interval(secs => seconds) END)) AS at
			 FROM (SELECT lease_expires_at, coalesce(progress_at, claimed_at) AS since, ${stallSecondsSql} AS seconds
				FROM cards WHERE status = 'claimed' OR (status = 'review' AND claim_owner IS NOT NULL)) c`,
		);
		const at = rows[0]?.at ?? null;
		return at === null ? null : new Date(at);
	}

	/** When the next deferred card becomes claimable (claim long-polls wait for it). */
	async nextDeferredAt(): Promise<Date | null> {
		const rows = await this.uow.db.query<{ at: Date | null }>(
			`SELECT min(defer_until) AS at FROM cards WHERE status = 'ready' AND defer_until > $1`,
			[this.uow.clock.now()],
		);
		const at = rows[0]?.at ?? null;
		return at === null ? null : new Date(at);
	}

	/**
	 * Folds card_counts' delta rows (migration 0012), prunes request_log older than a day, and runs
	 * VACUUM (ANALYZE) in PGlite (it has no autovacuum) on Baton's tables and pg_statistic (which each
	 * ANALYZE rewrites). Not the other system catalogs: only DDL changes them (migrations; Baton makes
	 * no temporary tables), and vacuuming all ~60 took 0.6–1.3 s of a 0.05–0.3 s VACUUM on a new store
	 *.
	 */
	async maintenance(): Promise<void> {
		const cutoff = new Date(this.uow.clock.now().getTime() - requestLogDays * 86_400_000);
		await this.uow.db.query('DELETE FROM request_log WHERE at < $1', [cutoff]);
		await foldCounts(this.uow.db);
		if (this.uow.db.mode === 'pglite') {
			const tables = await this.uow.db.query<{ name: string }>(
				'SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema()',
			);
			// One statement each: VACUUM refuses to run inside the implicit transaction of a multi-statement string.
			await this.uow.db.exec(`VACUUM (ANALYZE) ${tables.map(t => t.name).join(', ')}`);
			await this.uow.db.exec('VACUUM pg_catalog.pg_statistic');
		}
	}
}
