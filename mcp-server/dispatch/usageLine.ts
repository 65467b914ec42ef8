/**
 * A `--command` agent's usage line: `BATON_USAGE {"inputTokens":N,"outputTokens":N,"costUsd":X}`, the
 * attempt's running total so far (the last line counts; costUsd may be left out when the agent does not
 * know it). Recognised as rateLimit.ts recognises BATON_RATE_LIMITED: a whole line starting with the
 * word, never words inside other output. Pure: reads a line, reports nothing and invents no number.
 */
import { type UsageReport as Report, UsageReport } from '../../core/protocol';

export const usageWord = 'BATON_USAGE';

/** A recognised line: the usage it reports, or why it cannot be read (the line is then ignored). */
export type UsageLine = { usage: Report & { costUsd: number | null } } | { invalid: string };

/** The usage line's report, or undefined when the line is not a usage line at all. */
export function commandUsage(line: string): UsageLine | undefined {
	const text = line.trim();
	if (text !== usageWord && !text.startsWith(`${usageWord} `)) {
		return undefined;
	}
	const rest = text.slice(usageWord.length).trim();
	let parsed: unknown;
	try {
		parsed = JSON.parse(rest);
	} catch {
		return { invalid: `not JSON after ${usageWord}: ${rest.slice(0, 80)}` };
	}
	const checked = UsageReport.safeParse(parsed);
	if (!checked.success) {
		const issue = checked.error.issues[0];
		return {
			invalid: `${issue === undefined || issue.path.length === 0 ? 'the line' : issue.path.join('.')}: ${issue?.message ?? 'not a usage report'} (want {"inputTokens":N,"outputTokens":N,"costUsd":X}, numbers ≥ 0, tokens whole)`,
		};
	}
	return { usage: { ...checked.data, costUsd: checked.data.costUsd ?? null } };
}
