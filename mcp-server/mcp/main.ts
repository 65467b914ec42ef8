/**
 * Entry of dist/mcp.js: `baton mcp` alone, loaded by dist/baton.js (bin.ts) for that one command, so
 * each agent's MCP server parses no hub, store or CLI code. Only wiring: no logic here.
 */
import { createLogger } from '../../core/log';
import { runMcp } from './run';

runMcp(process.argv.slice(3)).then(
	code => {
		process.exitCode = code;
	},
	(error: unknown) => {
		createLogger('baton').error(error instanceof Error ? error.message : String(error));
		process.exitCode = 1;
	},
);
