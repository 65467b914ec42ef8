/**
 * Asks an owner socket (run/owner.sock, mcp-server/hub/ownership.ts) who owns a data dir, without opening
 * anything. A completed connect means a live owner even when it does not answer: the kernel accepted
 * for it. Kept apart from ownership.ts so clients (the extension) can probe without loading the store.
 */
import { createConnection } from 'node:net';

/** What a live owner answers on its socket (one JSON line), so a refused opener can name it. */
export interface OwnerAnnouncement {
	baton: 'owner';
	pid: number;
	role: string;
}

/** The answer of a probe of an owner socket path. */
export type OwnerProbe =
	{ state: 'alive'; pid: number | undefined; role: string | undefined } | { state: 'refused' } | { state: 'gone' };

const probeReadMs = 1_000;

/**
 * Connects to an existing owner socket. A completed connect means a live owner even when it does
 * not answer (stopped, or blocked in a long synchronous query): the kernel accepted for it.
 */
export function probeOwner(socketPath: string, readMs = probeReadMs): Promise<OwnerProbe> {
	return new Promise(resolve => {
		const socket = createConnection(socketPath);
		let data = '';
		let connected = false;
		const finish = (probe: OwnerProbe): void => {
			clearTimeout(timer);
			socket.destroy();
			resolve(probe);
		};
		const alive = (): void => {
			const line = data.split('\n')[0] ?? '';
			try {
				const parsed = JSON.parse(line) as Partial<OwnerAnnouncement>;
				finish({
					state: 'alive',
					pid: typeof parsed.pid === 'number' ? parsed.pid : undefined,
					role: typeof parsed.role === 'string' ? parsed.role : undefined,
				});
			} catch {
				finish({ state: 'alive', pid: undefined, role: undefined });
			}
		};
		const timer = setTimeout(() => {
			if (connected) {
				alive();
			} else {
				// A connect that neither completes nor fails: the listen queue is full, so someone listens.
				finish({ state: 'alive', pid: undefined, role: undefined });
			}
		}, readMs);
		socket.setEncoding('utf8');
		socket.on('connect', () => {
			connected = true;
		});
		socket.on('data', (chunk: string) => {
			data += chunk;
			if (data.includes('\n')) {
				alive();
			}
		});
		socket.on('end', () => alive());
		socket.on('error', (e: NodeJS.ErrnoException) => {
			if (connected) {
				alive();
			} else if (e.code === 'ECONNREFUSED') {
				finish({ state: 'refused' });
			} else if (e.code === 'ENOENT') {
				finish({ state: 'gone' });
			} else if (e.code === 'EAGAIN') {
				finish({ state: 'alive', pid: undefined, role: undefined });
			} else {
				finish({ state: 'refused' });
			}
		});
	});
}
