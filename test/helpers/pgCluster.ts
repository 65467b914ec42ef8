/**
 * A throwaway PostgreSQL server for tests that stop and start the database: its own cluster (initdb)
 * in a temp dir, on a free 127.0.0.1 port, trust auth, so the shared server on 5432 is never touched.
 * Finds the server binaries itself; as root (CI) it runs them as the `postgres` OS user, because
 * initdb and postgres refuse to run as root. Never skips: when no cluster can be made it throws a
 * sentence saying why, so the test fails visibly.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface PgCluster {
	readonly port: number;
	/** postgres://postgres@127.0.0.1:PORT/postgres */
	readonly url: string;
	/** `pg_ctl stop -m mode`: fast ends every session with FATAL 57P01, immediate kills the server. */
	stop(mode: 'fast' | 'immediate'): Promise<void>;
	start(): Promise<void>;
	/** The server's log so far (for failure messages). */
	log(): string;
	/** Stops the server however it can and removes the cluster. Safe to call twice, never throws. */
	destroy(): void;
}

/** The directory holding initdb and pg_ctl: pg_config's bindir, else the newest /usr/lib/postgresql/N/bin. */
export function pgBinDir(): string {
	const candidates: string[] = [];
	const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
	if (fromConfig.status === 0) {
		candidates.push(fromConfig.stdout.trim());
	}
	// Debian's pg_config (libpq-dev) names /usr/bin, where only the client tools live.
	const debian = '/usr/lib/postgresql';
	if (existsSync(debian)) {
		const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
		candidates.push(...versions.map(v => join(debian, v, 'bin')));
	}
	const found = candidates.find(dir => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
	if (found === undefined) {
		throw new Error(
			`Cannot find PostgreSQL's initdb and pg_ctl (looked in ${candidates.join(', ') || 'pg_config and /usr/lib/postgresql/*/bin'}). ` +
				'Install the server: apt-get install postgresql.',
		);
	}
	return found;
}

/** As root: the postgres user's uid and gid, and how to run a command as that user. */
function runAs(): { uid: number; gid: number; wrap: (cmd: string, args: string[]) => [string, string[]] } | undefined {
	if (process.getuid?.() !== 0) {
		return undefined;
	}
	const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
	const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
	if (!Number.isInteger(uid) || uid <= 0) {
		throw new Error(
			'Running as root, and initdb refuses root: a `postgres` OS user is needed to run the test cluster (apt-get install postgresql creates it).',
		);
	}
	if (spawnSync('runuser', ['--help']).status === 0) {
		return { uid, gid, wrap: (cmd, args) => ['runuser', ['-u', 'postgres', '--', cmd, ...args]] };
	}
	const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
	return {
		uid,
		gid,
		wrap: (cmd, args) => ['su', ['postgres', '-s', '/bin/sh', '-c', [cmd, ...args].map(quote).join(' ')]],
	};
}

function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			server.close(() => {
				if (address !== null && typeof address === 'object') {
					resolve(address.port);
				} else {
					reject(new Error('no port'));
				}
			});
		});
	});
}

/** Creates and starts a cluster; throws a sentence naming the step that failed and its output. */
export async function startPgCluster(): Promise<PgCluster> {
	const bin = pgBinDir();
	const user = runAs();
	const root = mkdtempSync('/tmp/bt-pg-');
	if (user !== undefined) {
		chownSync(root, user.uid, user.gid);
	}
	chmodSync(root, 0o700);
	const data = join(root, 'data');
	const logFile = join(root, 'server.log');
	const run = (tool: string, args: string[]): Promise<void> => {
		const [cmd, argv] = user === undefined ? [join(bin, tool), args] : user.wrap(join(bin, tool), args);
		return new Promise((resolve, reject) => {
			execFile(cmd, argv, { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
				if (error) {
					reject(new Error(`${tool} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
				} else {
					resolve();
				}
			});
		});
	};
	let port = 0;
	const cluster: PgCluster = {
		get port() {
			return port;
		},
		get url() {
			return `postgres://postgres@127.0.0.1:${port}/postgres`;
		},
		stop: mode => run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']),
		start: () =>
			run('pg_ctl', [
				'-D',
				data,
				'-l',
				logFile,
				'-w',
				'-t',
				'30',
				// Unix socket in the cluster's own dir: /var/run/postgresql may be missing or not ours.
				'-o',
				`-c listen_addresses=127.0.0.1 -p ${port} -k ${root} -c max_connections=60`,
				'start',
			]),
		log: () => {
			try {
				return readFileSync(logFile, 'utf8');
			} catch {
				return '';
			}
		},
		destroy: () => {
			const pidFile = join(data, 'postmaster.pid');
			if (existsSync(pidFile)) {
				const [cmd, argv] =
					user === undefined
						? [join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']]
						: user.wrap(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
				spawnSync(cmd, argv, { timeout: 30_000 });
				// pg_ctl failed or timed out: the postmaster must not outlive the test.
				try {
					const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
					if (Number.isInteger(pid) && pid > 0) {
						process.kill(pid, 'SIGKILL');
					}
				} catch {
					// Stopped: the pid file is gone, or so is the process.
				}
			}
			rmSync(root, { recursive: true, force: true });
		},
	};
	try {
		await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
		// A port found free can be taken before the server binds it: try a few.
		for (let attempt = 1; ; attempt++) {
			port = await freePort();
			try {
				await cluster.start();
				break;
			} catch (e) {
				if (attempt >= 3) {
					throw e;
				}
			}
		}
	} catch (e) {
		const log = cluster.log();
		cluster.destroy();
		throw new Error(
			`Could not start a temporary PostgreSQL cluster with ${bin}: ${e instanceof Error ? e.message : String(e)}\n${log}`,
		);
	}
	return cluster;
}
