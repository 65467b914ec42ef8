/**
 * Ends a hub whose main thread is stuck (inside the store, or in JavaScript that never yields), from a
 * worker thread that the stuck thread cannot block. PGlite runs each statement synchronously in WASM; when its disk ran out of
 * space mid-WAL-write it was seen spinning there at 100 % CPU forever, answering no one.
 * Nothing on the main thread can notice that, so the main thread ticks a shared counter and the
 * worker kills the process when the ticks stop for `stuckMs` while the store's filesystem is below
 * the start reserve, or for `hardStuckMs` whatever the disk says. Killing loses nothing acknowledged
 * (PGlite recovers from its WAL on the next start) and lets clients start a fresh hub, which names
 * the full disk if it still is. Its last line names what it saw: the store stuck on a full disk, or
 * else the event loop blocked (from here a long statement and JavaScript that never yields look the
 * same, and the line says so). It must not judge anything else: a busy hub keeps ticking.
 */
import { Worker } from 'node:worker_threads';
import { startReserveBytes } from '../../core/files/diskSpace';
import { createLogger } from '../../core/log';

const log = createLogger('hub').child('watchdog');

export interface WatchdogOptions {
	/** The store's directory: its filesystem's free space is read by the worker. */
	dir: string;
	/** No tick for this long with the disk below the reserve: stuck (default 10 s). */
	stuckMs?: number;
	/** No tick for this long: stuck whatever the disk (default 120 s; clients gave up long before). */
	hardStuckMs?: number;
	minFreeBytes?: number;
}

const tickMs = 250;

/** The worker's code: plain CommonJS, evaluated in the worker (the bundle is one file). */
const workerSource = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const ticks = new Int32Array(workerData.buffer);
let seen = Atomics.load(ticks, 0);
let changedAt = Date.now();
setInterval(() => {
	const now = Atomics.load(ticks, 0);
	if (now !== seen) {
		seen = now;
		changedAt = Date.now();
		return;
	}
	const stuck = Date.now() - changedAt;
	if (stuck < workerData.stuckMs) return;
	let free = -1;
	try {
		const s = fs.statfsSync(workerData.dir);
		free = s.bavail * s.bsize;
	} catch {}
	const lowDisk = free >= 0 && free < workerData.minFreeBytes;
	if (!lowDisk && stuck < workerData.hardStuckMs) return;
	// Say what was seen: with the disk full, the store spinning in a write; otherwise only
	// that the event loop ran no timer, which a store statement or a request's own JavaScript can cause
	// (a scope check once did, and this line blamed the store).
	const what = lowDisk
		? 'the store has been stuck for ' + Math.round(stuck / 1000) + ' s with the disk holding it full (' + Math.round(free / 1048576) + ' MB free)'
		: "the hub's event loop has been blocked for " + Math.round(stuck / 1000) + ' s (no timer ran: a store statement or a request that never yields)';
	try {
		fs.writeSync(2, new Date().toISOString() + ' error hub/watchdog: ' + what + '; ending the hub (pid ' + process.pid + ') so a fresh one can start (the store recovers from its WAL)\\n');
	} catch {}
	process.kill(process.pid, 'SIGKILL');
}, 500);
`;

export class Watchdog {
	private readonly ticks = new Int32Array(new SharedArrayBuffer(4));
	private readonly timer: NodeJS.Timeout;
	private readonly worker: Worker;

	constructor(options: WatchdogOptions) {
		this.worker = new Worker(workerSource, {
			eval: true,
			workerData: {
				buffer: this.ticks.buffer,
				dir: options.dir,
				stuckMs: options.stuckMs ?? 10_000,
				hardStuckMs: options.hardStuckMs ?? 120_000,
				minFreeBytes: options.minFreeBytes ?? startReserveBytes,
			},
		});
		this.worker.unref();
		this.worker.on('error', e => log.error(`the store watchdog failed: ${e.message}`));
		this.timer = setInterval(() => Atomics.add(this.ticks, 0, 1), tickMs);
		this.timer.unref();
	}

	async stop(): Promise<void> {
		clearInterval(this.timer);
		await this.worker.terminate();
	}
}
