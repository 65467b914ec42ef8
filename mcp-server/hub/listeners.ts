/**
 * The small node:http and ws plumbing under the hub's listeners (connections.ts): listen and close as
 * promises, the plain-HTTP refusal of a websocket upgrade, and a ws frame's bytes as text. No hub
 * state, no checks: connections.ts decides who gets in.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { RawData } from 'ws';

export function listen(server: Server, pathOrPort: string | number, host?: string): Promise<void> {
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		const done = (): void => {
			server.off('error', reject);
			resolve();
		};
		if (typeof pathOrPort === 'string') {
			server.listen(pathOrPort, done);
		} else {
			server.listen(pathOrPort, host, done);
		}
	});
}

export function closeServer(server: Server): Promise<void> {
	return new Promise(resolve => {
		if (!server.listening) {
			resolve();
			return;
		}
		server.close(() => resolve());
		server.closeAllConnections();
	});
}

export function rejectUpgrade(socket: Socket, status: number, text: string): void {
	socket.end(
		`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${text.length + 1}\r\n\r\n${text}\n`,
	);
}

export function rawToString(data: RawData): string {
	if (Array.isArray(data)) {
		return Buffer.concat(data).toString('utf8');
	}
	if (data instanceof ArrayBuffer) {
		return Buffer.from(data).toString('utf8');
	}
	return data.toString('utf8');
}
