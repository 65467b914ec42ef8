/**
 * When a dispatched agent was refused by its provider for rate or quota, told only by that agent's own
 * signal, never by words anywhere in its output (a test run printing "Ran 429 tests" or a file about
 * quotas is work, not a refusal):
 * - `--command` agents: a line that is exactly `BATON_RATE_LIMITED`, optionally followed by a space and
 *   a JSON reason (`BATON_RATE_LIMITED {"reason":"429 from the API"}`), stops the agent at once; or the
 *   agent exits with code 75 (EX_TEMPFAIL, sysexits.h: "try again later").
 * - built-in CLIs: the CLI exited with a non-zero code and its own error report, the block starting at
 *   a line the CLI begins its errors with, names a rate or quota refusal (per kind below; the shapes
 *   are those the CLIs print in headless text mode).
 * Pure: it reads lines and exit codes, starts and stops nothing.
 */

/** The line a `--command` agent prints to say it was refused for rate or quota. */
export const rateLimitedLine = 'BATON_RATE_LIMITED';
/** The exit code a `--command` agent uses to say the same (EX_TEMPFAIL). */
export const rateLimitedExitCode = 75;

interface CliSignal {
	/** A line the CLI starts its own error report with (anchored: not a line of the agent's work). */
	errorStart: RegExp;
	/** What in that report (its first line and the lines after it) says rate or quota. */
	limited: RegExp;
}

/**
 * Each built-in CLI's own error shapes. Claude Code (-p, text): `API Error: 429 {"type":"error","error":
 * {"type":"rate_limit_error",…}}`, and for a plan's limit `Claude AI usage limit reached|<time>` or
 * `You've hit your limit · resets …`. Codex (exec): `ERROR: exceeded retry limit, last status: 429 Too
 * Many Requests`, `ERROR: You've hit your usage limit…`, `ERROR: Quota exceeded…`. Gemini CLI: an
 * `[API Error: …]` block (often prefixed `✕`) whose JSON has `"code": 429` / `RESOURCE_EXHAUSTED`.
 */
const cliSignals: Record<string, CliSignal> = {
	claude: {
		errorStart: /^(?:API Error\b|Claude AI usage limit reached\b|You've hit your (?:usage )?limit\b)/,
		limited:
			/^API Error:? \(?429\b|rate_limit_error|^Claude AI usage limit reached\b|^You've hit your (?:usage )?limit\b/m,
	},
	codex: {
		errorStart: /^ERROR:? /,
		limited: /\b429 Too Many Requests\b|\busage limit\b|\bquota exceeded\b|\brate limit(?:ed)?\b/i,
	},
	gemini: {
		errorStart: /^(?:✕ )?\[API Error\b|^Error when talking to Gemini API\b/,
		limited: /"code":\s*429\b|\bRESOURCE_EXHAUSTED\b|\b429 Too Many Requests\b/,
	},
};

/**
 * A `--command` agent's rate-limit line: the reason it gave (its JSON `reason`, else the text after the
 * word, else a default), or undefined when the line is not that signal.
 */
export function commandRateLimit(line: string): string | undefined {
	const text = line.trim();
	if (text === rateLimitedLine) {
		return 'the agent said BATON_RATE_LIMITED';
	}
	if (!text.startsWith(`${rateLimitedLine} `)) {
		return undefined;
	}
	const rest = text.slice(rateLimitedLine.length + 1).trim();
	try {
		const parsed: unknown = JSON.parse(rest);
		if (parsed !== null && typeof parsed === 'object' && typeof (parsed as { reason?: unknown }).reason === 'string') {
			return (parsed as { reason: string }).reason;
		}
	} catch {
		// Not JSON: the rest of the line is the reason as it stands.
	}
	return rest === '' ? 'the agent said BATON_RATE_LIMITED' : rest;
}

/**
 * Whether an agent that exited was refused for rate or quota, by its own signal: the reason line, or
 * undefined. `agent` is the built-in CLI's name, or undefined for a `--command` agent; `code` is null
 * when a signal ended it or its exit code is unknown (adopted), which never counts.
 */
export function exitRateLimit(
	agent: string | undefined,
	code: number | null,
	lines: readonly string[],
): string | undefined {
	if (code === null || code === 0) {
		return undefined;
	}
	if (agent === undefined) {
		for (const line of lines) {
			const reason = commandRateLimit(line);
			if (reason !== undefined) {
				return reason;
			}
		}
		return code === rateLimitedExitCode
			? `the agent exited with code ${rateLimitedExitCode} (rate limited)`
			: undefined;
	}
	const signal = cliSignals[agent];
	if (signal === undefined) {
		return undefined;
	}
	// The CLI's last error report: what it printed as it gave up.
	let start = -1;
	for (let i = lines.length - 1; i >= 0 && start < 0; i--) {
		if (signal.errorStart.test(lines[i] ?? '')) {
			start = i;
		}
	}
	if (start < 0) {
		return undefined;
	}
	const report = lines.slice(start).join('\n');
	return signal.limited.test(report) ? lines[start] : undefined;
}

/** The kinds with a documented signal (docs/guide.md lists them). */
export const rateLimitSignalKinds = Object.keys(cliSignals);
