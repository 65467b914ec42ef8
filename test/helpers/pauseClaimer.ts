/**
 * One claimer of the pause atomicity proof (test/proofs/pauseAtomicity.test.ts), run as its own
 * process: `node --import tsx test/helpers/pauseClaimer.ts <databaseUrl> <schema> <worker> <cards> <ms>`.
 * It opens its own Backlog on the PostgreSQL schema and, until `ms` have passed, claims by every path
 * in turn — the hot claim, a claim by a random id, a claim {labels} (the general path) — and completes
 * what it got, half the time with complete {next} (the stored hand-over). Prints one JSON line of
 * counts on exit. It checks nothing itself: the test reads the event log.
 */
import { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import type { ClaimResult } from '../../core/protocol';
import { prng } from './prng';

const [databaseUrl = '', schema = '', worker = '0', cardsText = '0', msText = '0'] = process.argv.slice(2);
const random = prng(Number(worker) + 1);
const cardCount = Number(cardsText);

async function main(): Promise<void> {
	const b = await Backlog.open({ databaseUrl, schema });
	const ctx = { actor: `claimer-${worker}`, session: `session-claimer-${worker}-0000000` };
	const counts = { claimed: 0, handedOver: 0, empty: 0, refused: 0 };
	const deadline = Date.now() + Number(msText);
	try {
		let held: ClaimResult | undefined;
		while (Date.now() < deadline) {
			if (held?.card == null) {
				const path = random();
				try {
					held =
						path < 0.5
							? await b.claim(ctx, {})
							: path < 0.75
								? await b.claim(ctx, { cardId: `c${Math.floor(random() * cardCount)}` })
								: await b.claim(ctx, { labels: ['x'] });
				} catch (e) {
					if (!BatonError.is(e)) {
						throw e;
					}
					counts.refused++;
					held = undefined;
					continue;
				}
				if (held.card === null) {
					counts.empty++;
					await new Promise(resolve => setTimeout(resolve, 5));
					continue;
				}
				counts.claimed++;
			}
			const card = held.card;
			if (random() < 0.5) {
				const done = await b.complete(ctx, { cardId: card.id, result: 'ok', next: {} });
				held = done.next;
				if (held?.card != null) {
					counts.handedOver++;
				}
			} else {
				await b.complete(ctx, { cardId: card.id, result: 'ok' });
				held = undefined;
			}
		}
		if (held?.card != null) {
			await b.release(ctx, { cardId: held.card.id });
		}
	} finally {
		await b.close();
	}
	process.stdout.write(`${JSON.stringify(counts)}\n`);
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
