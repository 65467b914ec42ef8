/**
 * How the extension reaches its hub (hubConnection.ts connects with these options): the data dir, the
 * human's identity, the clock, and the hub to spawn when none runs: `dist/baton.js hub` under VS
 * Code's own runtime as plain Node, so users need no separate Node. Options only: it
 * never connects or spawns by itself.
 */
import { join } from 'node:path';
import type { ConnectHubOptions } from '../core/client/connectHub';
import type { Clock } from '../core/clock';
import { type BatonConfig, humanAgent } from './config';

export function hubConnectOptions(config: BatonConfig, extensionPath: string, clock: Clock): ConnectHubOptions {
	const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
	if (config.databaseUrl !== undefined) {
		env.DATABASE_URL = config.databaseUrl;
	}
	return {
		dataDir: config.dataDir,
		client: 'extension',
		clock,
		agent: humanAgent(config),
		// VS Code's own runtime runs the hub as plain Node, so users need no separate Node.
		spawnHub: {
			command: process.execPath,
			args: [join(extensionPath, 'dist', 'baton.js'), 'hub', '--data-dir', config.dataDir],
			env,
		},
	};
}
