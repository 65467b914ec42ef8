/**
 * Pure: attempts' usage (tokens and dollars their agents reported) summed, and the one text every face
 * prints for it (show, the board's detail pane, the tree's tooltip, baton run's lines). An unknown cost
 * stays unknown: a sum with one attempt that reported no cost has no cost, and the text says "cost
 * unknown" rather than a number. Platform-free and zod-free (types only from core/protocol), no I/O.
 */
import type { Usage } from '../protocol';

/** The sum of `usages`, or undefined when there is none; costUsd null when any of them has none. */
export function sumUsage(usages: readonly (Usage | undefined)[]): Usage | undefined {
	let sum: Usage | undefined;
	for (const u of usages) {
		if (u === undefined) {
			continue;
		}
		sum =
			sum === undefined
				? { ...u }
				: {
						inputTokens: sum.inputTokens + u.inputTokens,
						outputTokens: sum.outputTokens + u.outputTokens,
						// Kept to a millionth of a dollar: a float sum drifts in its last bits (0.01 + 0.05).
						costUsd:
							sum.costUsd === null || u.costUsd === null ? null : Math.round((sum.costUsd + u.costUsd) * 1e6) / 1e6,
					};
	}
	return sum;
}

/** Dollars as people read them: cents from $1 up, four decimals below (an attempt often costs $0.0123). */
export function dollars(usd: number): string {
	return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** "12,345 in / 678 out tokens, $0.0421"; "… tokens, cost unknown"; none reported: "cost unknown (…)". */
export function usageText(usage: Usage | undefined): string {
	if (usage === undefined) {
		return 'cost unknown (no attempt reported tokens or cost)';
	}
	const tokens = `${usage.inputTokens.toLocaleString('en-US')} in / ${usage.outputTokens.toLocaleString('en-US')} out tokens`;
	return `${tokens}, ${usage.costUsd === null ? 'cost unknown' : dollars(usage.costUsd)}`;
}
