/**
 * Watching Baton from outside, measured as users feel it on a real hub process:
 * - an agent's claim + complete round trip with no webhook, with a hook whose receiver never answers
 *   (target: "never delaying a claim", "a slow or dead receiver stalls nothing"), and with a healthy
 *   receiver; the ratio of the hung case's p99 to the baseline's is the judged number;
 * - how long after the claim's answer a healthy receiver has the event (delivery lag);
 * - one Prometheus scrape of /metrics at the bench backlog's size, with the scrape token.
 * Phases run one after another on one hub, each on fresh ready cards of the same backlog.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

import { hubPaths } from '../../core/paths';
import type { RpcClient } from '../../core/protocol/rpc';
import { cardBatches } from './dataset';
import { connect, startHub } from './hubProcess';
import { Reporter, median, percentile, row } from './report';

const quick = process.argv.includes('--quick');
const size = quick ? 2_000 : 20_000;
const rounds = quick ? 60 : 300;
const scrapes = quick ? 10 : 40;

/**
 * A local receiver: answers 200 at once, or never (`hang`), and remembers when each event first
 * arrived, by `<type>:<card id>`.
 */
function receiver(hang: boolean): Promise<{ url: string; arrivals: Map<string, number>; close(): void }> {
	const arrivals = new Map<string, number>();
	const held: ServerResponse[] = [];
	const server = createServer((req: IncomingMessage, res: ServerResponse) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
		req.on('end', () => {
			const { event } = JSON.parse(body) as { event?: { type: string; cardId: string | null } };
			const key = event === undefined ? undefined : `${event.type}:${event.cardId}`;
			if (key !== undefined && !arrivals.has(key)) {
				arrivals.set(key, performance.now());
			}
			if (hang) {
				held.push(res);
			} else {
				res.writeHead(200).end();
			}
		});
	});
	return new Promise(resolve => {
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as AddressInfo;
			resolve({
				url: `http://127.0.0.1:${port}/hook`,
				arrivals,
				close: () => {
					for (const res of held) {
						res.destroy();
					}
					server.closeAllConnections();
					server.close();
				},
			});
		});
	});
}

interface Round {
	ms: number;
	/** When the claim's answer came, and the card (for the delivery lag). */
	claimedAt: number;
	cardId: string;
}

async function claimComplete(client: RpcClient, n: number): Promise<Round[]> {
	const out: Round[] = [];
	for (let i = 0; i < n; i++) {
		const t0 = performance.now();
		const claimed = await client.request('card/claim', {});
		const claimedAt = performance.now();
		if (claimed.card === null || claimed.lease === null) {
			throw new Error('the bench backlog ran out of ready cards');
		}
		await client.request('card/complete', { cardId: claimed.card.id, epoch: claimed.lease.epoch });
		out.push({ ms: performance.now() - t0, claimedAt, cardId: claimed.card.id });
	}
	return out;
}

function scrape(port: number, token: string): Promise<{ ms: number; bytes: number }> {
	const t0 = performance.now();
	return new Promise((resolve, reject) => {
		const req = request(
			{ host: '127.0.0.1', port, path: '/metrics', headers: { Authorization: `Bearer ${token}` } },
			res => {
				let bytes = 0;
				res.on('data', (chunk: Buffer) => (bytes += chunk.length));
				res.on('end', () =>
					res.statusCode === 200
						? resolve({ ms: performance.now() - t0, bytes })
						: reject(new Error(`/metrics answered ${res.statusCode}`)),
				);
			},
		);
		req.on('error', reject);
		req.end();
	});
}

async function main(): Promise<void> {
	const reporter = new Reporter('ecosystem');
	const dataDir = mkdtempSync('/tmp/bt-bench-eco-');
	const hung = await receiver(true);
	const healthy = await receiver(false);
	// The hung receiver holds each POST until the hub gives up on it (its default timeout, 10 s).
	const hub = await startHub(dataDir, 120_000);
	try {
		const admin = await connect(dataDir);
		for (const cards of cardBatches(size)) {
			await admin.request('card/create', { cards }, { timeoutMs: 120_000 });
		}
		const agent = await connect(dataDir, 'test', { id: 'bench-agent' });
		await claimComplete(agent, 20); // warm-up

		const baseline = await claimComplete(agent, rounds);
		const hook = await admin.request('hooks/add', { url: hung.url, secret: 'bench-secret-of-enough-length' });
		const whileHung = await claimComplete(agent, rounds);
		await admin.request('hooks/remove', { id: hook.hook.id });
		const healthyHook = await admin.request('hooks/add', {
			url: healthy.url,
			secret: 'bench-secret-of-enough-length',
		});
		// The new hook starts after the log's current end; give it a moment to settle.
		await new Promise(r => setTimeout(r, 500));
		const withHealthy = await claimComplete(agent, rounds);
		await new Promise(r => setTimeout(r, 2_000));
		const lags = withHealthy
			.map(r => (healthy.arrivals.get(`claimed:${r.cardId}`) ?? Number.NaN) - r.claimedAt)
			.filter(ms => Number.isFinite(ms));
		await admin.request('hooks/remove', { id: healthyHook.hook.id });

		const note = `${rounds} rounds, one agent, ${size}-card backlog`;
		const p99 = (rs: Round[]): number =>
			percentile(
				rs.map(r => r.ms),
				99,
			);
		reporter.add(row('claim + complete p50, no webhook', median(baseline.map(r => r.ms)), 'ms', undefined, note));
		reporter.add(row('claim + complete p99, no webhook', p99(baseline), 'ms', undefined, note));
		reporter.add(
			row('claim + complete p50, receiver never answers', median(whileHung.map(r => r.ms)), 'ms', undefined, note),
		);
		reporter.add(row('claim + complete p99, receiver never answers', p99(whileHung), 'ms', undefined, note));
		reporter.add(
			row(
				'p99 with a hung receiver ÷ p99 without',
				p99(whileHung) / p99(baseline),
				'×',
				{ max: 1.25 },
				'target: a dead receiver never delays a claim',
			),
		);
		reporter.add(row('claim + complete p99, healthy receiver', p99(withHealthy), 'ms', undefined, note));
		reporter.add(
			row(
				'webhook delivery lag p50 (claim answered → receiver has the event)',
				median(lags),
				'ms',
				undefined,
				`${lags.length} of ${rounds} claim events matched`,
			),
		);
		reporter.add(
			row(
				'webhook delivery lag p99',
				percentile(lags, 99),
				'ms',
				{ max: 1000 },
				'one delivery in flight per hook, in seq order',
			),
		);

		const paths = hubPaths(dataDir);
		const { port } = JSON.parse(readFileSync(paths.hubJson, 'utf8')) as { port: number };
		const token = readFileSync(paths.metricsToken, 'utf8').trim();
		const samples: number[] = [];
		let bytes = 0;
		for (let i = 0; i < scrapes; i++) {
			const s = await scrape(port, token);
			samples.push(s.ms);
			bytes = s.bytes;
		}
		reporter.add(
			row(`/metrics scrape p50, ${size} cards`, median(samples), 'ms', undefined, `${scrapes} scrapes, scrape token`),
		);
		reporter.add(row(`/metrics scrape p99, ${size} cards`, percentile(samples, 99), 'ms', { max: 100 }));
		reporter.add(row('/metrics body', bytes / 1024, 'KB'));
		agent.close();
		admin.close();
	} finally {
		await hub.stop();
		hung.close();
		healthy.close();
		rmSync(dataDir, { recursive: true, force: true });
	}
	reporter.finish();
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
