/**
 * The one poll of the tests: asks `probe` until it answers (anything but undefined or false) or the
 * time is up, then fails naming what it waited for. For state no event announces (a process's exit,
 * a file, another process's store); where an event can be awaited, await the event instead.
 */

export interface WaitForOptions {
	/** Treat a throwing probe as "not yet" (its last error goes into the timeout's message); default: rethrow. */
	retryErrors?: boolean;
	/** Between probes; default 20 ms. */
	intervalMs?: number;
}

/** Resolves with the probe's first answer other than undefined/false (`true` for a boolean probe). */
export async function waitFor<T>(
	probe: () => T | undefined | false | Promise<T | undefined | false>,
	timeoutMs = 10_000,
	what = 'condition',
	options: WaitForOptions = {},
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let last: unknown;
	for (;;) {
		try {
			const answer = await probe();
			if (answer !== undefined && answer !== false) {
				return answer;
			}
		} catch (e) {
			if (options.retryErrors !== true) {
				throw e;
			}
			last = e;
		}
		if (Date.now() > deadline) {
			const lastError = last instanceof Error ? ` (last error: ${last.message})` : '';
			throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError}`);
		}
		await new Promise(resolve => setTimeout(resolve, options.intervalMs ?? 20));
	}
}
