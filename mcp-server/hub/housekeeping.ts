/**
 * The hub's upkeep timers: write maintenance — the event log's compaction, the request log's pruning,
 * VACUUM, then the safe part of workspace gc — (soon after start, after 60 s without
 * writes, every ~5,000 events), periodic backups (only when something changed, never on a full disk) and the idle exit
 * (no client for `idleMs`). It owns these timers only: it answers no request, touches no connection
 * and stops the hub only through the `stop` it is given.
 */
import type { Backlog } from '../../core/backlog';
import { createLogger, errorText } from '../../core/log';
import type { Backups } from './backups';
import type { StoreGuard } from './storeGuard';

const log = createLogger('hub').child('housekeeping');

export interface HousekeepingOptions {
	backlog: Backlog;
	backups: Backups;
	guard: StoreGuard;
	/** Exit after this long without any client. */
	idleMs: number;
	/** Periodic backup interval; 0 disables. */
	backupIntervalMs: number;
	/** Write maintenance after this many events (about every 5,000 writes by default). */
	maintenanceEveryWrites?: number | undefined;
	/** The safe part of workspace gc (workspaceGc.ts), run after the store's maintenance. */
	gcWorkspaces?: (() => Promise<void>) | undefined;
	/** How many connections are open. */
	clients: () => number;
	stopping: () => boolean;
	stop: (reason: string) => void;
}

const idleMaintenanceMs = 60_000;
/**
 * The start's maintenance waits this long: run at once, PGlite's VACUUM held the event loop while the
 * first client waited for its hello (0.5–2 s of a 2–3 s start; docs/benchmarks.md).
 */
const startMaintenanceDelayMs = 10_000;

export class Housekeeping {
	private idleTimer: NodeJS.Timeout | undefined;
	private backupTimer: NodeJS.Timeout | undefined;
	private idleMaintenanceTimer: NodeJS.Timeout | undefined;
	private startMaintenanceTimer: NodeJS.Timeout | undefined;
	private writesSinceMaintenance = 0;
	private writesSinceBackup = 0;
	private maintaining = false;

	constructor(private readonly options: HousekeepingOptions) {}

	/** Maintenance soon, backups on their interval, and the idle clock (the hub just started listening). */
	start(): void {
		this.startMaintenanceTimer = setTimeout(() => this.runMaintenance(), startMaintenanceDelayMs);
		this.startMaintenanceTimer.unref();
		if (this.options.backupIntervalMs > 0) {
			this.backupTimer = setInterval(() => void this.periodicBackup(), this.options.backupIntervalMs);
		}
		this.clientsChanged();
	}

	stop(): void {
		this.disarmIdle();
		clearInterval(this.backupTimer);
		clearTimeout(this.idleMaintenanceTimer);
		clearTimeout(this.startMaintenanceTimer);
	}

	/** A connection opened or closed: the idle clock runs only while there is none. */
	clientsChanged(): void {
		if (this.options.clients() > 0) {
			this.disarmIdle();
		} else {
			this.armIdle();
		}
	}

	/** Counts delivered events towards maintenance and the next backup. */
	onEvents(count: number): void {
		this.writesSinceBackup += count;
		this.writesSinceMaintenance += count;
		if (this.writesSinceMaintenance >= (this.options.maintenanceEveryWrites ?? 5_000)) {
			this.runMaintenance();
		}
		clearTimeout(this.idleMaintenanceTimer);
		this.idleMaintenanceTimer = setTimeout(() => this.runMaintenance(), idleMaintenanceMs);
		this.idleMaintenanceTimer.unref();
	}

	private runMaintenance(): void {
		if (this.maintaining || this.options.stopping() || !this.options.guard.smallWritesOk) {
			return;
		}
		this.maintaining = true;
		this.writesSinceMaintenance = 0;
		this.options.backlog
			.maintenance()
			.then(r => {
				if (r.deleted > 0) {
					log.info(`compacted the event log: ${r.deleted} progress events in ${r.ms} ms (horizon seq ${r.horizon})`);
				}
			})
			.catch((e: unknown) => log.error(`maintenance failed: ${errorText(e)}`))
			.then(() => this.options.gcWorkspaces?.())
			.catch((e: unknown) => log.error(`workspace gc failed: ${errorText(e)}`))
			.finally(() => {
				this.maintaining = false;
			});
	}

	private async periodicBackup(): Promise<void> {
		if (this.writesSinceBackup === 0 && this.options.backups.list().length > 0) {
			return;
		}
		try {
			this.options.guard.beforeWrite(0);
		} catch {
			log.warn('backup skipped: the disk is full');
			return;
		}
		this.writesSinceBackup = 0;
		try {
			const info = await this.options.backups.run();
			log.info(`backup ${info.path} (${info.cards} cards, ${info.events} events)`);
		} catch (e) {
			// Nothing was kept (core/files/wholeFile.ts, verifyBackup): the next interval tries again.
			this.writesSinceBackup += 1;
			log.error(`backup failed: ${errorText(e)}`);
		}
	}

	private armIdle(): void {
		if (this.options.clients() > 0 || this.options.stopping() || this.idleTimer !== undefined) {
			return;
		}
		this.idleTimer = setTimeout(() => {
			this.idleTimer = undefined;
			if (this.options.clients() === 0) {
				this.options.stop(`no clients for ${Math.round(this.options.idleMs / 1000)} s`);
			}
		}, this.options.idleMs);
	}

	private disarmIdle(): void {
		clearTimeout(this.idleTimer);
		this.idleTimer = undefined;
	}
}
