/**
 * The Backlog facade's wiring (core/backlog/index.ts extends it): the options, the unit of work on the
 * store it is given, one instance of each operation module around it, the store's lifecycle (close,
 * commit listeners) and the accessors the store test and the benches reach. It must not hold SQL,
 * decide anything or offer operations: the Backlog's methods delegate to the modules built here.
 */
import { Agents } from './agents';
import { Cards } from './cards';
import { ClaimCycle } from './claimCycle';
import { CheckRuns } from './checkRuns';
import { LandingQueue } from './landingQueue';
import { ClaimEnds } from './claimEnds';
import { Dependencies } from './dependencies';
import { DispatchOps } from './dispatchOps';
import { Feed } from './feed';
import { HookStore } from './hookStore';
import { LogCompaction } from './logCompaction';
import { Messages } from './messages';
import { Pauses } from './pauses';
import { ProjectSettingsStore } from './projectSettings';
import { Reviews } from './reviews';
import { Scopes } from './scopes';
import type { HotStatements } from './hotSql';
import type { StoreOptions } from './openStore';
import { BacklogSettings } from './settings';
import { Transfer } from './transfer';
import { type Listener, UnitOfWork } from './unitOfWork';
import { Upkeep } from './upkeep';
import { type Clock, systemClock } from '../clock';
import { type Logger, createLogger } from '../log';
import { type HealthThresholds, defaultHealthThresholds } from '../protocol';
import type { Db } from '../store/db';

export interface BacklogOptions extends StoreOptions {
	clock?: Clock | undefined;
	thresholds?: HealthThresholds | undefined;
	/** Lease length when claim/heartbeat give none (default 300 s). */
	defaultTtlSeconds?: number | undefined;
	/** The owner's logger (the hub's); default a `backlog` logger on stderr. */
	log?: Logger | undefined;
}

/** The Backlog's modules and store, built once per backlog; only Backlog extends it. */
export abstract class BacklogWiring {
	readonly mode: 'pglite' | 'postgres';
	/** PGlite only: the whole data dir as a gzip tarball (backups). */
	readonly dumpDataDir?: () => Promise<Blob | File>;
	/** What opening the store did that users should hear of (hub/status, the hub's log). */
	notices: readonly string[] = [];
	private closed = false;
	protected readonly uow: UnitOfWork;
	protected readonly settingsStore: BacklogSettings;
	protected readonly cards: Cards;
	protected readonly claimCycle: ClaimCycle;
	protected readonly claimEnds: ClaimEnds;
	protected readonly dependencies: Dependencies;
	protected readonly agents: Agents;
	protected readonly feed: Feed;
	protected readonly messages: Messages;
	protected readonly reviews: Reviews;
	protected readonly scopes: Scopes;
	protected readonly transfer: Transfer;
	protected readonly upkeep: Upkeep;
	protected readonly logCompaction: LogCompaction;
	protected readonly projects: ProjectSettingsStore;
	/** Outgoing webhooks (backlog/hookStore.ts): the hooks/* operations and the delivering hub's bookkeeping. */
	readonly hooks: HookStore;
	/** Pauses of the line (backlog/pauses.ts): pause/set, pause/clear, pause/list. */
	readonly pauses: Pauses;
	/** Dispatch (backlog/dispatchOps.ts): card/assign, dispatch/update|exited, run/*. */
	readonly dispatch: DispatchOps;
	/** Checks before review (backlog/checkRuns.ts): a check's outcome, the checks still running. */
	readonly checks: CheckRuns;
	/** The landing queue (backlog/landingQueue.ts): one landing at a time per project and base, across hubs. */
	readonly landingQueue: LandingQueue;

	/** A backlog on an opened, migrated store (openStore); close() closes the store. */
	constructor(db: Db, options: BacklogOptions = {}, dump?: () => Promise<Blob | File>) {
		this.mode = db.mode;
		if (dump !== undefined) {
			this.dumpDataDir = dump;
		}
		const thresholds = options.thresholds ?? defaultHealthThresholds;
		const defaultTtl = options.defaultTtlSeconds ?? 300;
		this.uow = new UnitOfWork(
			db,
			options.clock ?? systemClock,
			options.log ?? createLogger('backlog'),
			options.fastPaths,
		);
		this.settingsStore = new BacklogSettings(this.uow);
		this.cards = new Cards(this.uow, thresholds);
		this.claimCycle = new ClaimCycle(this.uow, defaultTtl);
		this.claimEnds = new ClaimEnds(this.uow, this.settingsStore);
		this.dependencies = new Dependencies(this.uow);
		this.agents = new Agents(this.uow, thresholds, defaultTtl);
		this.feed = new Feed(this.uow);
		this.messages = new Messages(this.uow);
		this.reviews = new Reviews(this.uow, defaultTtl);
		this.scopes = new Scopes(this.uow);
		this.transfer = new Transfer(this.uow);
		this.upkeep = new Upkeep(this.uow);
		this.logCompaction = new LogCompaction(this.uow, this.settingsStore);
		this.hooks = new HookStore(this.uow);
		this.projects = new ProjectSettingsStore(this.uow);
		this.pauses = new Pauses(this.uow);
		this.dispatch = new DispatchOps(this.uow);
		this.checks = new CheckRuns(this.uow, this.settingsStore);
		this.landingQueue = new LandingQueue(this.uow);
	}

	// The store and the hot statements, under the names the store test and test/bench/core.ts (which
	// swaps in a recording Db) reach them by.
	protected get db(): Db {
		return this.uow.db;
	}

	protected set db(db: Db) {
		this.uow.db = db;
	}

	protected get sql(): HotStatements {
		return this.uow.catalogue.sql;
	}

	/** Closes the store cleanly (PGlite checkpoints, so the next open needs no WAL replay). */
	async close(): Promise<void> {
		if (this.closed) {
			return;
		}
		this.closed = true;
		await this.db.close();
	}

	/** Called after each committed mutation with the events it appended, in seq order. */
	onCommitted(listener: Listener): () => void {
		return this.uow.onCommitted(listener);
	}
}
