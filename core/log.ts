/**
 * The one logger of the hub, the MCP server, the CLI and core: a line per message with an ISO
 * timestamp, the level and the component (`2026-11-25T09:00:00.000Z warn  hub: …`), written to stderr
 * (the detached hub's stderr is run/hub.log; `baton mcp`'s stdout is the protocol, so never stdout).
 * `BATON_LOG_LEVEL` (debug, info, warn, error; default info) drops what is below it. Node only: the
 * extension logs to its output channel and the webview to the console; the core client code the
 * extension bundles (core/client/) writes its few diagnostics here, to the extension host's stderr.
 * Diagnostics only: what a command prints for its user is not a log line.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
	debug(message: string, error?: unknown): void;
	info(message: string, error?: unknown): void;
	warn(message: string, error?: unknown): void;
	error(message: string, error?: unknown): void;
	/** A logger for a part of this component: `hub/reaper`. */
	child(component: string): Logger;
}

export interface LoggerOptions {
	level?: LogLevel;
	/** Where lines go (default stderr); tests collect them. */
	write?: (line: string) => void;
	/** Default Date.now. */
	now?: () => number;
}

/** The level BATON_LOG_LEVEL names, else info. */
export function levelFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): LogLevel {
	const value = env.BATON_LOG_LEVEL?.trim().toLowerCase();
	return value !== undefined && Object.hasOwn(rank, value) ? (value as LogLevel) : 'info';
}

export function createLogger(component: string, options: LoggerOptions = {}): Logger {
	const min = rank[options.level ?? levelFromEnv()];
	const write = options.write ?? ((line: string) => void process.stderr.write(line));
	const now = options.now ?? Date.now;
	const log =
		(level: LogLevel) =>
		(message: string, error?: unknown): void => {
			if (rank[level] < min) {
				return;
			}
			const detail = error === undefined ? '' : `: ${describe(error)}`;
			write(`${new Date(now()).toISOString()} ${level.padEnd(5)} ${component}: ${message}${detail}\n`);
		};
	return {
		debug: log('debug'),
		info: log('info'),
		warn: log('warn'),
		error: log('error'),
		child: sub => createLogger(`${component}/${sub}`, options),
	};
}

/**
 * An Error's stack (it starts with the message), anything else as text. Never throws: it runs in
 * catch blocks (a failing listener's error), where a throw would turn a reported fault into a new one.
 */
function describe(error: unknown): string {
	if (error instanceof Error) {
		return error.stack ?? error.message;
	}
	if (typeof error === 'string') {
		return error;
	}
	try {
		// undefined for functions and symbols, whatever lib.d.ts says.
		const text = JSON.stringify(error) as string | undefined;
		return text ?? String(error);
	} catch {
		// Circular objects and bigints.
		return String(error);
	}
}

/** An error's message alone (no stack), for a one-line entry such as `backup failed: <message>`. */
export function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
