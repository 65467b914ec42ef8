/**
 * Entry point of the `baton` program (dist/baton.js): routes the first argument to the hub, the MCP
 * server or the CLI. Only wiring lives here. Each face is imported on demand: esbuild keeps a
 * dynamically imported module's top level lazy, so `baton mcp` and the CLI never evaluate the store
 * (PGlite, pg) that only the hub needs — a measurable part of `baton mcp`'s start-up.
 */
import { createLogger } from '../core/log';

async function main(argv: string[]): Promise<number> {
	const [command, ...rest] = argv;
	switch (command) {
		case 'hub':
			if (rest[0] === undefined || rest[0].startsWith('-')) {
				return (await import('./hub/run')).runHub(rest);
			}
			return runCliQuietly(argv);
		case 'mcp':
			return (await import('./mcp/run')).runMcp(rest);
		default:
			return runCliQuietly(argv);
	}
}

/** The CLI; its output to a pipe that closed early (`| head`) ends it quietly (cli/output.ts). */
async function runCliQuietly(argv: string[]): Promise<number> {
	(await import('./cli/output')).endQuietlyOnClosedPipe();
	return (await import('./cli/run')).runCli(argv);
}

main(process.argv.slice(2)).then(
	code => {
		process.exitCode = code;
	},
	(error: unknown) => {
		createLogger('baton').error(error instanceof Error ? error.message : String(error));
		process.exitCode = 1;
	},
);
