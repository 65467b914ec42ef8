/**
 * `baton hub [flags]`: win the election for the data dir, open the store, serve until idle or told
 * to stop. Exit codes: 0 stopped cleanly, 1 could not start, 2 bad flags, 3 another hub owns the
 * data dir (normal when racing clients spawned several). Logs go to stderr only; never the token.
 */
import {
	chmodSync,
	existsSync,
	readFileSync,
	realpathSync,
	renameSync,
	rmSync,
	unlinkSync,
	writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Backlog } from '../../core/backlog';
import type { BackoffPolicy } from '../../core/backoff';
import { fastPathsSpec, parseFastPaths } from '../../core/backlog/fastPaths';
import { BatonError } from '../../core/errors';
import { postgresUnavailable } from '../../core/store/pgErrors';
import { checkFreeSpace, startReserveBytes } from '../../core/files/diskSpace';
import { createLogger, errorText } from '../../core/log';
import { type Ownership, acquireOwnership } from './ownership';
import { type HubPaths, hubPaths, resolveDataDir, stalePgliteDataDir } from '../../core/paths';
import { type HealthThresholds, defaultHealthThresholds, protocolVersion } from '../../core/protocol';
import packageJson from '../../package.json';
import { ensureToken } from './auth';
import { Hub } from './hub';
import { Watchdog } from './watchdog';

const log = createLogger('hub');

const usage = `Usage: baton hub [--data-dir DIR] [--ttl SECONDS] [--idle-minutes N | --idle-seconds N] [--backup-minutes N]
Serves one Baton data dir to every client (normally started on demand by clients).
Environment: BATON_DATA_DIR, DATABASE_URL (+ BATON_PG_SCHEMA) for PostgreSQL, BATON_HUB_IDLE_MINUTES,
BATON_BACKUP_MINUTES, BATON_HEALTHY_SECONDS, BATON_LATE_SECONDS, BATON_STALE_SECONDS, BATON_STALL_SECONDS.`;

interface HubFlags {
	dataDir: string;
	ttlSeconds: number | undefined;
	idleMs: number;
	backupIntervalMs: number;
}

export async function runHub(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
	if (args.includes('--help') || args.includes('-h')) {
		process.stdout.write(`${usage}\n`);
		return 0;
	}
	let flags: HubFlags;
	let thresholds: HealthThresholds;
	try {
		flags = parseHubFlags(args, env);
		thresholds = thresholdsFromEnv(env);
	} catch (e) {
		if (BatonError.is(e)) {
			log.error(`${e.message}\n${usage}`);
			return 2;
		}
		throw e;
	}
	const paths = hubPaths(flags.dataDir);
	let ownership: Ownership;
	try {
		ownership = await acquireOwnership(paths.dataDir, { role: 'baton hub', log: log.child('ownership') });
	} catch (e) {
		if (BatonError.is(e, 'conflict')) {
			log.warn(e.message);
			return 3;
		}
		log.error(errorText(e));
		return 1;
	}
	let hub: Hub | undefined;
	let backlog: Backlog | undefined;
	let watchdog: Watchdog | undefined;
	const databaseUrl = env.DATABASE_URL?.trim() === '' ? undefined : env.DATABASE_URL;
	try {
		if (databaseUrl === undefined) {
			// Opening replays the WAL and checkpoints: on a full disk that is where PGlite would get stuck.
			checkFreeSpace(paths.pgdata, startReserveBytes, true);
		}
		const token = ensureToken(paths.runDir, paths.token);
		const metricsToken = ensureToken(paths.runDir, paths.metricsToken);
		removeStaleSocket(paths.socket);
		const assetsDir = pgliteAssetsDir();
		const started = Date.now();
		backlog = await Backlog.open({
			log: log.child('backlog'),
			...(databaseUrl === undefined ? { pgliteDir: paths.pgdata } : { databaseUrl }),
			...(env.BATON_PG_SCHEMA === undefined ? {} : { schema: env.BATON_PG_SCHEMA }),
			...(assetsDir === undefined ? {} : { assetsDir }),
			...(flags.ttlSeconds === undefined ? {} : { defaultTtlSeconds: flags.ttlSeconds }),
			thresholds,
			// A measurement switch, not a setting: turns latency mechanisms off (docs/benchmarks.md).
			fastPaths: parseFastPaths(env.BATON_FAST_PATHS),
		});
		log.info(`opened the ${backlog.mode} store in ${Date.now() - started} ms`);
		if (env.BATON_FAST_PATHS !== undefined) {
			log.info(`fast paths (BATON_FAST_PATHS): ${fastPathsSpec(parseFastPaths(env.BATON_FAST_PATHS))}`);
		}
		const stale = stalePgliteDataDir(paths.dataDir, env);
		const notices = stale === undefined ? [] : [stale];
		for (const notice of [...backlog.notices, ...notices]) {
			log.warn(`notice: ${notice}`);
		}
		hub = new Hub({
			paths,
			backlog,
			token,
			metricsToken,
			thresholds,
			version: packageJson.version,
			idleMs: flags.idleMs,
			backupIntervalMs: flags.backupIntervalMs,
			...(databaseUrl === undefined ? {} : { databaseUrl }),
			webviewDir: join(bundleDir(), 'webview'),
			notices,
			...(databaseUrl === undefined ? { pgliteDir: paths.pgdata } : {}),
			webhooks: webhookOptions(env),
		});
		await hub.start();
		if (databaseUrl === undefined) {
			watchdog = new Watchdog({ dir: paths.pgdata });
		}
		writeHubJson(paths, hub.tcpPort);
		rmSync(paths.refusal, { force: true });
		log.info(
			`pid ${process.pid} serving ${paths.dataDir} on ${paths.socket} and 127.0.0.1:${hub.tcpPort} (protocol ${protocolVersion})`,
		);
	} catch (caught) {
		const e = (databaseUrl === undefined ? undefined : postgresUnavailable(caught, databaseUrl, false)) ?? caught;
		log.error(`could not start: ${errorText(e)}`);
		if (
			BatonError.is(e, 'store_refused') ||
			BatonError.is(e, 'store_too_new') ||
			BatonError.is(e, 'unavailable') ||
			BatonError.is(e, 'disk_full')
		) {
			// Starting again would only fail the same way: tell the client that spawned this hub why. On
			// a full disk this write may fail too; the client then checks the free space itself.
			try {
				writeFileSync(paths.refusal, JSON.stringify({ pid: process.pid, code: e.code, message: e.message }), {
					mode: 0o600,
				});
			} catch (writeError) {
				log.error(`could not write ${paths.refusal}: ${errorText(writeError)}`);
			}
		}
		if (hub) {
			await hub.stop('start failed');
		} else {
			await backlog?.close().catch(() => undefined);
		}
		removeHubJson(paths);
		await ownership.release();
		return 1;
	}
	const running = hub;
	const onSignal = (signal: NodeJS.Signals): void => {
		void running.stop(signal);
	};
	process.on('SIGTERM', onSignal);
	process.on('SIGINT', onSignal);
	await running.stopped;
	await watchdog?.stop();
	process.off('SIGTERM', onSignal);
	process.off('SIGINT', onSignal);
	// hub.json first, ownership last: a client that sees no hub.json may spawn a hub, which wins
	// the election only once this process has closed the store.
	removeHubJson(paths);
	await ownership.release();
	if (running.failure !== undefined) {
		log.error(`stopped because the store failed (${running.failure})`);
		// Whatever the broken store still holds open must not keep this process alive.
		setTimeout(() => process.exit(1), 2_000).unref();
		return 1;
	}
	log.info('stopped');
	return 0;
}

export function parseHubFlags(args: string[], env: NodeJS.ProcessEnv = process.env): HubFlags {
	let values;
	try {
		({ values } = parseArgs({
			args,
			strict: true,
			allowPositionals: false,
			options: {
				'data-dir': { type: 'string' },
				ttl: { type: 'string' },
				'idle-minutes': { type: 'string' },
				'idle-seconds': { type: 'string' },
				'backup-minutes': { type: 'string' },
			},
		}));
	} catch (e) {
		throw new BatonError('invalid_input', errorText(e));
	}
	const dataDir = values['data-dir'] === undefined ? resolveDataDir(env) : resolve(values['data-dir']);
	const ttlSeconds = values.ttl === undefined ? undefined : positive('--ttl', values.ttl, 5, 3600);
	let idleMs: number;
	if (values['idle-seconds'] !== undefined) {
		idleMs = positive('--idle-seconds', values['idle-seconds'], 0.1, 86_400) * 1000;
	} else {
		const minutes = values['idle-minutes'] ?? env.BATON_HUB_IDLE_MINUTES ?? '10';
		idleMs = positive('--idle-minutes', minutes, 0.01, 10_080) * 60_000;
	}
	const backupMinutes = values['backup-minutes'] ?? env.BATON_BACKUP_MINUTES ?? '60';
	const backupIntervalMs =
		backupMinutes === '0' ? 0 : positive('--backup-minutes', backupMinutes, 0.01, 10_080) * 60_000;
	return { dataDir, ttlSeconds, idleMs, backupIntervalMs };
}

/**
 * BATON_WEBHOOK_TIMEOUT_MS (a request's timeout, default 10 s) and BATON_WEBHOOK_BACKOFF_MS "MIN,MAX"
 * (the retry backoff, default 1000,300000): for tests and receivers known to be slow.
 */
function webhookOptions(env: NodeJS.ProcessEnv): { timeoutMs?: number; backoff?: BackoffPolicy } {
	const out: { timeoutMs?: number; backoff?: BackoffPolicy } = {};
	if (env.BATON_WEBHOOK_TIMEOUT_MS !== undefined) {
		out.timeoutMs = positive('BATON_WEBHOOK_TIMEOUT_MS', env.BATON_WEBHOOK_TIMEOUT_MS, 10, 600_000);
	}
	if (env.BATON_WEBHOOK_BACKOFF_MS !== undefined) {
		const [min = '', max = ''] = env.BATON_WEBHOOK_BACKOFF_MS.split(',');
		out.backoff = {
			minMs: positive('BATON_WEBHOOK_BACKOFF_MS (min)', min, 1, 3_600_000),
			maxMs: positive('BATON_WEBHOOK_BACKOFF_MS (max)', max, 1, 3_600_000),
		};
	}
	return out;
}

function thresholdsFromEnv(env: NodeJS.ProcessEnv): HealthThresholds {
	const read = (name: string, fallback: number): number =>
		env[name] === undefined ? fallback : positive(name, env[name], 1, 86_400 * 7);
	return {
		healthySeconds: read('BATON_HEALTHY_SECONDS', defaultHealthThresholds.healthySeconds),
		lateSeconds: read('BATON_LATE_SECONDS', defaultHealthThresholds.lateSeconds),
		staleSeconds: read('BATON_STALE_SECONDS', defaultHealthThresholds.staleSeconds),
		stallSeconds: read('BATON_STALL_SECONDS', defaultHealthThresholds.stallSeconds),
	};
}

function positive(name: string, raw: string, min: number, max: number): number {
	const n = Number(raw);
	if (!Number.isFinite(n) || n < min || n > max) {
		throw new BatonError('invalid_input', `${name} must be a number from ${min} to ${max}, got "${raw}".`);
	}
	return n;
}

/**
 * Where dist/baton.js really lives; its pglite/ and webview/ folders sit beside it. Real path: an
 * `npm i -g` install runs it through the symlink PREFIX/bin/baton, and beside that there is no
 * pglite/, so the hub fell back to the source layout and looked for dist/migrations.
 */
function bundleDir(): string {
	const script = resolve(process.argv[1] ?? '.');
	return dirname(existsSync(script) ? realpathSync(script) : script);
}

/** dist/pglite when running from the bundle (esbuild does not follow PGlite's asset URLs). */
export function pgliteAssetsDir(): string | undefined {
	const dir = join(bundleDir(), 'pglite');
	return existsSync(join(dir, 'pglite.wasm')) ? dir : undefined;
}

/** We own the data dir, so any hub.sock left there is from a dead hub. */
function removeStaleSocket(path: string): void {
	try {
		unlinkSync(path);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
			throw e;
		}
	}
}

function writeHubJson(paths: HubPaths, port: number): void {
	const tmp = `${paths.hubJson}.${process.pid}.tmp`;
	writeFileSync(tmp, `${JSON.stringify({ port, pid: process.pid, protocol: protocolVersion })}\n`, { mode: 0o600 });
	renameSync(tmp, paths.hubJson);
	// Prometheus' file_sd_configs follows this file, so a scrape finds the hub on each start's new port.
	// No secret in it (the scrape token stays in run/), hence readable by a Prometheus of another user.
	const targets = [{ targets: [`127.0.0.1:${port}`], labels: { baton_data_dir: paths.dataDir } }];
	const targetsTmp = `${paths.metricsTargets}.${process.pid}.tmp`;
	writeFileSync(targetsTmp, `${JSON.stringify(targets)}\n`);
	chmodSync(targetsTmp, 0o644); // whatever the umask
	renameSync(targetsTmp, paths.metricsTargets);
}

function removeHubJson(paths: HubPaths): void {
	try {
		const info = JSON.parse(readFileSync(paths.hubJson, 'utf8')) as { pid?: unknown; port?: unknown };
		if (info.pid === process.pid) {
			unlinkSync(paths.hubJson);
			// Only while hub.json is ours: the targets file is then ours too (both written together).
			rmSync(paths.metricsTargets, { force: true });
		}
	} catch {
		// Missing or not ours: leave it.
	}
}
