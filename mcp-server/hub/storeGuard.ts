/**
 * The hub's view of its store's health: refuses writes with `disk_full` before PGlite
 * could run out of space, notices when space returns, names PostgreSQL outages and their end, and
 * tells a fatal store failure (a PANIC or FATAL from PGlite, a WASM trap, an I/O error) from an
 * ordinary refusal so the hub can stop instead of serving from a broken store. It only decides and
 * reports; answering clients and stopping are the hub's.
 */
import { BatonError } from '../../core/errors';
import {
	bytesNeededToWrite,
	diskFullError,
	freeBytes,
	fullDiskProbeBytes,
	startReserveBytes,
} from '../../core/files/diskSpace';
import { errorText } from '../../core/log';
import { sqlState } from '../../core/store/db';
import { postgresUnavailable } from '../../core/store/pgErrors';
import type { StoreHealth } from '../../core/protocol';

export interface StoreGuardOptions {
	/** PGlite's directory: its filesystem is the one checked. Absent on PostgreSQL. */
	pgliteDir?: string | undefined;
	databaseUrl?: string | undefined;
	/** A cheap read that succeeds once PostgreSQL answers again. */
	probe: () => Promise<unknown>;
	onChange: (health: StoreHealth) => void;
	/** How often to look again while the disk is full or PostgreSQL is away (default 1 s). */
	pollMs?: number;
	/** Test hook: free bytes of the store's filesystem. */
	freeBytes?: (path: string) => number;
}

const watchMs = 2_000;

export class StoreGuard {
	private current: StoreHealth = { state: 'ok' };
	private poll: NodeJS.Timeout | undefined;
	/** PGlite: a look every few seconds, so faces turn red before anyone's write is refused. */
	private readonly watch: NodeJS.Timeout | undefined;
	private readonly free: (path: string) => number;

	constructor(private readonly options: StoreGuardOptions) {
		this.free = options.freeBytes ?? freeBytes;
		if (options.pgliteDir !== undefined) {
			this.watch = setInterval(() => this.look(), watchMs);
			this.watch.unref();
		}
	}

	get health(): StoreHealth {
		return this.current;
	}

	/**
	 * Before a mutating request of `requestBytes`: throws `disk_full` when the store's filesystem has
	 * less than the reserve plus what this write may take (WAL included, core/files/diskSpace.ts). The store
	 * switches to the `disk_full` state only when even a one-card write would not fit; a large request
	 * refused while smaller ones fit is refused alone.
	 */
	beforeWrite(requestBytes: number): void {
		const dir = this.options.pgliteDir;
		if (dir === undefined) {
			return;
		}
		const needed = bytesNeededToWrite(requestBytes);
		const free = this.free(dir);
		if (free >= needed) {
			return;
		}
		const fullAt = bytesNeededToWrite(fullDiskProbeBytes);
		if (free < fullAt) {
			this.set({ state: 'disk_full', message: diskFullError(dir, free, fullAt).message });
		}
		throw diskFullError(dir, free, needed, false, free >= fullAt);
	}

	/** Before a small write a client asked for (a liveness ping): only the start reserve must be free. */
	beforeSmallWrite(): void {
		const dir = this.options.pgliteDir;
		if (dir !== undefined && !this.smallWritesOk) {
			throw diskFullError(dir, this.free(dir), startReserveBytes);
		}
	}

	/**
	 * Whether the hub's own small writes (agent registration, reaper, maintenance) may run: they need
	 * no more than a WAL segment free. Never throws.
	 */
	get smallWritesOk(): boolean {
		const dir = this.options.pgliteDir;
		if (dir === undefined) {
			return this.current.state !== 'unavailable';
		}
		try {
			return this.free(dir) >= startReserveBytes;
		} catch {
			return false;
		}
	}

	/**
	 * What a failed store call means for clients: `disk_full` (PostgreSQL's 53100), `unavailable` for
	 * an unreachable PostgreSQL (and the state switches until it answers again), else undefined (the
	 * caller treats it as internal). Fatal failures are `fatalReason`'s.
	 */
	classify(e: unknown): BatonError | undefined {
		if (sqlState(e) === '53100') {
			const where =
				this.options.databaseUrl === undefined ? 'the disk holding the Baton backlog' : 'the PostgreSQL server';
			return new BatonError(
				'disk_full',
				`The write was refused: ${where} is out of space (${errorText(e)}). Free some space there; writes work again once it has room.`,
			);
		}
		if (this.options.databaseUrl === undefined) {
			return undefined;
		}
		const down = postgresUnavailable(e, this.options.databaseUrl);
		if (down !== undefined) {
			this.set({ state: 'unavailable', message: down.message });
		}
		return down;
	}

	/** A store call succeeded: PostgreSQL is back if it was away. */
	succeeded(): void {
		if (this.current.state === 'unavailable' && this.options.databaseUrl !== undefined) {
			this.set({ state: 'ok' });
		}
	}

	/** The store failed beyond recovery in this process: the state clients see while the hub stops. */
	failed(reason: string): void {
		this.set(
			{
				state: 'unavailable',
				message: `The Baton store failed (${reason}); the hub is stopping and the next command starts a fresh one, which recovers everything acknowledged.`,
			},
			true,
		);
	}

	stop(): void {
		clearInterval(this.poll);
		this.poll = undefined;
		clearInterval(this.watch);
	}

	private look(): void {
		if (this.current.state !== 'ok') {
			return;
		}
		try {
			this.beforeWrite(fullDiskProbeBytes);
		} catch {
			// beforeWrite switched to disk_full.
		}
	}

	private set(health: StoreHealth, force = false): void {
		// Called again for every refused write: only a change of state is news (the free MB drift).
		if (health.state === this.current.state && !force) {
			return;
		}
		this.current = health;
		this.options.onChange(health);
		if (health.state === 'ok') {
			clearInterval(this.poll);
			this.poll = undefined;
		} else if (this.poll === undefined) {
			this.poll = setInterval(() => void this.recheck(), this.options.pollMs ?? 1_000);
			this.poll.unref();
		}
	}

	/** While not ok: space back above the reserve, or PostgreSQL answering, ends the state. */
	private async recheck(): Promise<void> {
		const dir = this.options.pgliteDir;
		if (this.current.state === 'disk_full' && dir !== undefined) {
			try {
				if (this.free(dir) >= bytesNeededToWrite(fullDiskProbeBytes)) {
					this.set({ state: 'ok' });
				}
			} catch {
				// The filesystem cannot even be asked: stay.
			}
			return;
		}
		if (this.current.state === 'unavailable' && this.options.databaseUrl !== undefined) {
			try {
				await this.options.probe();
				this.succeeded();
			} catch {
				// Still away.
			}
		}
	}
}

/**
 * Why an error means the store cannot go on in this process, or undefined. PGlite reports PANIC and
 * FATAL with that severity (PostgreSQL would restart the backend; PGlite is the backend); a WASM
 * trap (RuntimeError) or a closed instance leaves nothing to query; SQLSTATE class 58 is an I/O or
 * system error. PostgreSQL's own FATALs (a dropped connection) are outages, not this.
 */
export function fatalReason(e: unknown, mode: 'pglite' | 'postgres'): string | undefined {
	if (mode !== 'pglite' || typeof e !== 'object' || e === null) {
		return undefined;
	}
	const severity = (e as { severity?: unknown }).severity;
	const message = errorText(e).split('\n')[0]?.slice(0, 300) ?? '';
	if (severity === 'PANIC' || severity === 'FATAL') {
		return `${severity}: ${message}`;
	}
	if ((e as { name?: unknown }).name === 'RuntimeError') {
		return `the store's WebAssembly trapped: ${message}`;
	}
	if (message.includes('PGlite is closed')) {
		return 'the store was closed underneath the hub';
	}
	const state = sqlState(e);
	if (state?.startsWith('58') === true) {
		return `I/O error ${state}: ${message}`;
	}
	return undefined;
}
