/**
 * The switches of the backlog's latency mechanisms. Each one turns a mechanism off so the general path
 * runs instead; all are on unless a caller says otherwise. They exist to prove the mechanisms change
 * nothing but speed (test/proofs/fastPathDifferential.test.ts) and to measure what each one buys
 * (test/bench/fastPaths.ts, docs/benchmarks.md). They are a measurement switch, not a setting: nothing
 * here decides anything about cards, and no user is expected to turn one off.
 */

export interface FastPaths {
	/**
	 * PGlite: hot statements prepared once and sent by Bind/Execute through execProtocolRawStream
	 * (core/store/pgWire.ts), without PGlite's locks when nothing else is under way. Off: PGlite's own
	 * `query()`, which parses and plans each call.
	 */
	wire: boolean;
	/**
	 * The holder's claim, complete, complete {next} and heartbeat as one named statement each
	 * (hotSql.ts). Off: the general path, a transaction that loads the card and decides with core/rules/stateMachine.ts.
	 */
	hot: boolean;
	/**
	 * `complete {next}` as one call: PostgreSQL's baton_hand_over function (migrations/functions.sql), PGlite's
	 * one statement. Off: complete, then claim.
	 */
	handOver: boolean;
}

export type FastPathName = keyof FastPaths;

export const fastPathNames: readonly FastPathName[] = ['wire', 'hot', 'handOver'];

export const allFastPaths: Readonly<FastPaths> = { wire: true, hot: true, handOver: true };

export const noFastPaths: Readonly<FastPaths> = { wire: false, hot: false, handOver: false };

/**
 * Reads a switch spec as the hub takes it from BATON_FAST_PATHS: comma-separated `-name` (off) or
 * `+name` (on) applied to all on, or `none` / `all` first ("none,+hot"). Empty or undefined is all on.
 * Names are case-insensitive (`handover`). An unknown name throws, so a typo never measures the wrong thing.
 */
export function parseFastPaths(spec: string | undefined): FastPaths {
	const paths: FastPaths = { ...allFastPaths };
	for (const raw of (spec ?? '').split(',')) {
		const part = raw.trim().toLowerCase();
		if (part === '' || part === 'all') {
			Object.assign(paths, part === 'all' ? allFastPaths : {});
			continue;
		}
		if (part === 'none') {
			Object.assign(paths, noFastPaths);
			continue;
		}
		const on = !part.startsWith('-');
		const word = part.replace(/^[-+]/, '');
		const name = fastPathNames.find(n => n.toLowerCase() === word);
		if (name === undefined) {
			throw new Error(`unknown fast path "${word}" (known: ${fastPathNames.join(', ')}; write -name to turn one off)`);
		}
		paths[name] = on;
	}
	return paths;
}

/** The spec that parses back to `paths`: "all", or the ones that are off ("-wire,-hot"). */
export function fastPathsSpec(paths: FastPaths): string {
	const off = fastPathNames.filter(n => !paths[n]);
	return off.length === 0 ? 'all' : off.map(n => `-${n}`).join(',');
}
