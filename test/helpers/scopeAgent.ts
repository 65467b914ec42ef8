/**
 * One agent of the scope contention proof (test/mcp-server/scopeContention.test.ts), run as its own
 * process: `node --import tsx test/helpers/scopeAgent.ts <dataDir> <agentId> <project> <seed>`. It
 * connects to the running hub of `dataDir` as `agentId`, then claims (for `project`), sometimes
 * reserves one more path, holds the card a few milliseconds so claims really overlap in time, and
 * completes, until no card is ready or claimed. Prints one JSON line of counts on exit. It checks
 * nothing itself: the test reads the event log.
 */
import { connectHub } from '../../core/client/connectHub';
import { prng } from './prng';

const [dataDir = '', agentId = '', project = '', seedText = '1'] = process.argv.slice(2);
const random = prng(Number(seedText));
/** Paths an agent may reserve mid-work; some overlap other cards' scopes on purpose. */
const reservable = ['package.json', 'docs/guide.md', 'src/m1/extra.ts', 'src/shared/util.ts', 'lock:release'];

async function main(): Promise<void> {
	const client = await connectHub({
		dataDir,
		client: 'test',
		agent: { id: agentId },
		spawnHub: false,
		requestTimeoutMs: 60_000, // a loaded CI machine must not turn a slow answer into a failed agent
	});
	const counts = { completed: 0, emptyClaims: 0, reserved: 0, reserveRefused: 0, lost: 0 };
	for (;;) {
		const { card, lease } = await client.request('card/claim', { project, waitSeconds: 1 });
		if (card === null || lease === null) {
			counts.emptyClaims++;
			const stats = await client.request('card/stats', {});
			if (stats.counts.ready + stats.counts.claimed === 0) {
				break;
			}
			continue;
		}
		if (random() < 0.3) {
			const path = reservable[Math.floor(random() * reservable.length)] ?? 'package.json';
			const r = await client.request('card/reserve', { cardId: card.id, epoch: lease.epoch, paths: [path] });
			counts.reserved += r.granted.length;
			counts.reserveRefused += r.refused.length;
		}
		await new Promise(resolve => setTimeout(resolve, Math.floor(random() * 15)));
		try {
			await client.request('card/complete', { cardId: card.id, epoch: lease.epoch, result: `by ${agentId}` });
			counts.completed++;
		} catch {
			counts.lost++; // a lease lost to the reaper: the card goes back to the pool, the log shows it
		}
	}
	process.stdout.write(`${JSON.stringify(counts)}\n`);
	client.close();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
