/**
 * Child process for the crash proof: opens a PGlite backlog, optionally checks the writes a previous
 * (killed) writer acknowledged, then creates cards one transaction each and prints `ACK <id>` after
 * each commit; after every second create it also claims the oldest ready card and completes it through
 * the hot path (one prepared statement each) and prints `ACK <id>:done`. Runs until it is killed.
 * Usage: crashWriter.ts <pgliteDir> <run> [ackedIdsFile]
 */
import { existsSync, readFileSync } from 'node:fs';

import { Backlog } from '../../core/backlog';

async function main(): Promise<void> {
	const [dir, run, ackedFile] = process.argv.slice(2);
	if (dir === undefined || run === undefined) {
		throw new Error('usage: crashWriter.ts <pgliteDir> <run> [ackedIdsFile]');
	}
	// Modules are loaded: from here on a kill lands in PGlite's open (or first init).
	process.stdout.write('START\n');
	const started = performance.now();
	const backlog = await Backlog.open({ pgliteDir: dir });
	process.stdout.write(`OPEN ${Math.round(performance.now() - started)}\n`);
	if (ackedFile !== undefined && existsSync(ackedFile)) {
		const acked = readFileSync(ackedFile, 'utf8').split('\n').filter(Boolean);
		const present = new Map<string, string>();
		for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
			const page = await backlog.exportCards(cursor === undefined ? {} : { cursor });
			page.cards.forEach(c => present.set(c.id, c.status));
			cursor = page.nextCursor;
		}
		const withEvent = new Set<string>();
		for (let seq = 0; ;) {
			const events = await backlog.eventsAfter(seq, 1000);
			if (events.length === 0) {
				break;
			}
			events.forEach(e => withEvent.add(e.cardId));
			seq = events.at(-1)?.seq ?? seq;
		}
		const missing = acked.filter(entry =>
			entry.endsWith(':done') ? present.get(entry.slice(0, -5)) !== 'done' : !present.has(entry),
		);
		const orphans = [...present.keys()].filter(id => !withEvent.has(id));
		process.stdout.write(
			`VERIFY ${acked.length} ${present.size} ${missing.length} ${orphans.length} ${missing.slice(0, 3).join(',')}\n`,
		);
	}
	for (let n = 0; ; n++) {
		const id = `w${run}-${n}`;
		await backlog.create({ actor: 'crash-writer' }, { cards: [{ id, title: `written by run ${run}` }] });
		process.stdout.write(`ACK ${id}\n`);
		if (n % 2 === 1) {
			const ctx = { actor: `crash-writer-${run}` };
			const { card, lease } = await backlog.claim(ctx, {});
			if (card !== null && lease !== null) {
				await backlog.complete(ctx, { cardId: card.id, epoch: lease.epoch });
				process.stdout.write(`ACK ${card.id}:done\n`);
			}
		}
	}
}

main().catch((e: unknown) => {
	process.stderr.write(`crashWriter failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
	process.exit(1);
});
