/**
 * `GET /metrics` against one real `baton hub` process: claims, a complete, a fail
 * and a lease expiry through the protocol (an MCP-kind connection, so its calls are timed), then the
 * exposition read by a Prometheus text-format parser: families, types, labels and counts, the card
 * gauges equal to card/stats, open cards by card label (one series per label, no card id). The guards: a missing or wrong token is 401, the scrape token opens
 * /metrics and nothing else (no websocket, no hello), a non-loopback Host is 403. Two hubs on one
 * PostgreSQL each count their own commits and report the same cards.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from 'parse-prometheus-text-format';
import type { Result } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { uniqueSchema } from '../helpers/backlog';
import {
	type HubProcess,
	RawClient,
	type SharedHubs,
	client,
	hubHttp,
	removeDataDir,
	startHub,
	startSharedHubs,
	tempDataDir,
	waitFor,
} from '../helpers/hub';

function family(families: PrometheusFamily[], name: string): PrometheusFamily {
	const found = families.find(f => f.name === name);
	assert.ok(found, `family ${name} is exposed`);
	return found;
}

/** The value of the sample whose labels include `labels` (exactly one must match). */
function sample(families: PrometheusFamily[], name: string, labels: Record<string, string> = {}): number {
	const matching = family(families, name).metrics.filter(m =>
		Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
	);
	assert.equal(matching.length, 1, `one ${name} sample with ${JSON.stringify(labels)}`);
	return Number(matching[0]?.value ?? matching[0]?.count);
}

/**
 * One label set of a labelled histogram, parsed. The parser (1.1.1) folds a histogram's samples into
 * one and drops their labels when any label besides `le` is present, so we hand it that family's
 * lines for one label value with the label taken out: what remains is a plain histogram it reads.
 */
function histogram(text: string, name: string, label: string, value: string): PrometheusSample {
	const mark = `${label}="${value}"`;
	const lines = text
		.split('\n')
		.filter(
			l =>
				l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `) || (l.startsWith(name) && l.includes(mark)),
		)
		.map(l => l.replace(`,${mark}`, '').replace(`${mark},`, '').replace(`{${mark}}`, ''));
	const parsed = family(parsePrometheusTextFormat(`${lines.join('\n')}\n`), name).metrics;
	assert.equal(parsed.length, 1, `one ${name} histogram with ${mark}`);
	return parsed[0] ?? {};
}

describe('/metrics', () => {
	let dataDir: string;
	let hub: HubProcess;
	let scrapeToken: string;
	let agent: RpcClient;
	let human: RpcClient;

	let text = '';

	async function scrape(): Promise<PrometheusFamily[]> {
		const answer = await hubHttp(hub.port, '/metrics', { headers: { Authorization: `Bearer ${scrapeToken}` } });
		assert.equal(answer.status, 200, answer.body);
		assert.match(String(answer.headers['content-type']), /^text\/plain; version=0\.0\.4/);
		text = answer.body;
		return parsePrometheusTextFormat(answer.body);
	}

	before(async () => {
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
		scrapeToken = readFileSync(hub.paths.metricsToken, 'utf8').trim();
		human = await client(dataDir);
		// An MCP-kind connection with an agent: its requests are what baton_mcp_call_duration_seconds times.
		agent = await client(dataDir, { client: 'mcp', agent: { id: 'metrics-agent' } });
		await human.request('card/create', {
			cards: [
				// Labels: ui on two open cards and a done one, api on one open card.
				{ id: 'M1', title: 'expires', priority: 9, project: 'github.com/acme/web', labels: ['ui'] },
				{ id: 'M2', title: 'completes', priority: 8, project: 'github.com/acme/web', labels: ['ui'] },
				{ id: 'M3', title: 'fails', priority: 7, project: 'github.com/acme/api', labels: ['ui', 'api'] },
				{ id: 'M4', title: 'waits', priority: 1 },
				{ id: 'M5', title: 'in progress', priority: 0, project: 'github.com/acme/api' },
			],
		});
		// The shortest lease the protocol allows: the reaper reclaims it while the other checks run.
		const expiring = await agent.request('card/claim', { cardId: 'M1', ttlSeconds: 5 });
		assert.equal(expiring.card?.id, 'M1');
		const done = await agent.request('card/claim', { cardId: 'M2' });
		await agent.request('card/complete', { cardId: 'M2', epoch: done.lease?.epoch, result: 'ok' });
		const failing = await agent.request('card/claim', { cardId: 'M3' });
		await agent.request('card/fail', { cardId: 'M3', epoch: failing.lease?.epoch, reason: 'tests red', retry: false });
		assert.equal((await agent.request('card/claim', { cardId: 'M5' })).card?.id, 'M5');
	});

	after(async () => {
		agent.close();
		human.close();
		await hub.stop();
		const targetsLeft = existsSync(hub.paths.metricsTargets);
		removeDataDir(dataDir);
		assert.equal(targetsLeft, false, 'a stopped hub leaves no scrape target behind');
	});

	it('creates the scrape token 0600 beside the hub token, different from it, and names it in hub/status', async () => {
		assert.match(scrapeToken, /^[0-9a-f]{64}$/);
		assert.notEqual(scrapeToken, hub.token);
		assert.equal(statSync(hub.paths.metricsToken).mode & 0o777, 0o600);
		const status = await human.request('hub/status', {});
		assert.deepEqual(status.metrics, {
			url: `http://127.0.0.1:${hub.port}/metrics`,
			tokenFile: hub.paths.metricsToken,
		});
	});

	it('writes its /metrics target for Prometheus file_sd (the port changes at every start)', () => {
		const targets = JSON.parse(readFileSync(hub.paths.metricsTargets, 'utf8')) as unknown;
		assert.deepEqual(targets, [{ targets: [`127.0.0.1:${hub.port}`], labels: { baton_data_dir: hub.paths.dataDir } }]);
		assert.equal(statSync(hub.paths.metricsTargets).mode & 0o777, 0o644, 'no secret in it: Prometheus may read it');
	});

	it('answers 401 without a token or with a wrong one, and leaks no token', async () => {
		const missing = await hubHttp(hub.port, '/metrics');
		assert.equal(missing.status, 401);
		assert.match(missing.body, /Authorization: Bearer/);
		assert.match(missing.body, /metrics\.token/);
		assert.equal(missing.headers['www-authenticate'], 'Bearer realm="baton-metrics"');
		const wrongToken = 'f'.repeat(64);
		const wrong = await hubHttp(hub.port, '/metrics', { headers: { Authorization: `Bearer ${wrongToken}` } });
		assert.equal(wrong.status, 401);
		assert.match(wrong.body, /not this hub's scrape token/);
		const basic = await hubHttp(hub.port, '/metrics', { headers: { Authorization: `Basic ${scrapeToken}` } });
		assert.equal(basic.status, 401, 'only a bearer token counts');
		for (const answer of [missing, wrong, basic]) {
			assert.ok(!answer.body.includes(scrapeToken) && !answer.body.includes(hub.token), 'no token in the body');
			assert.ok(!answer.body.includes(hub.paths.runDir), 'no path in the body');
			assert.equal(answer.headers['access-control-allow-origin'], undefined);
		}
	});

	it('refuses a non-loopback Host (403) even with the token, and anything but GET/HEAD (405)', async () => {
		const auth = `Bearer ${scrapeToken}`;
		const rebound = await hubHttp(hub.port, '/metrics', { headers: { Authorization: auth, Host: 'evil.example:80' } });
		assert.equal(rebound.status, 403);
		const post = await hubHttp(hub.port, '/metrics', { method: 'POST', headers: { Authorization: auth } });
		assert.equal(post.status, 405);
		assert.equal(post.headers.allow, 'GET, HEAD');
		const byName = await hubHttp(hub.port, '/metrics', {
			headers: { Authorization: auth, Host: `localhost:${hub.port}` },
		});
		assert.equal(byName.status, 200);
	});

	it('serves with the hub token too; the scrape token opens no websocket and passes no hello', async () => {
		const full = await hubHttp(hub.port, '/metrics', { headers: { Authorization: `Bearer ${hub.token}` } });
		assert.equal(full.status, 200);
		await assert.rejects(
			RawClient.open(`ws://127.0.0.1:${hub.port}/ws`, { headers: { Authorization: `Bearer ${scrapeToken}` } }),
			(e: { status?: number }) => e.status === 401,
		);
		const raw = await RawClient.unix(hub.paths);
		try {
			const hello = await raw.hello({ token: scrapeToken });
			assert.equal(hello.hello, 'error');
			assert.equal((hello.error as { code: string }).code, 'unauthorized');
			assert.equal((await raw.waitClosed()).code, 1008);
		} finally {
			raw.close();
		}
		const board = await hubHttp(hub.port, '/board', { headers: { Authorization: `Bearer ${scrapeToken}` } });
		assert.equal(board.status, 401, 'the scrape token is no board session either');
	});

	it('exposes the counters, gauges and histograms with Prometheus names, types and labels', async () => {
		// The reaper reclaims M1 at its lease's expiry (5 s after the claim in before()).
		let families: PrometheusFamily[] = [];
		await waitFor(
			async () => {
				families = await scrape();
				return sample(families, 'baton_lease_expiries_total') === 1;
			},
			15_000,
			'the lease expiry counted',
		);
		const types = Object.fromEntries(families.map(f => [f.name, f.type]));
		assert.deepEqual(
			{
				claims: types.baton_claims_total,
				completions: types.baton_completions_total,
				failures: types.baton_failures_total,
				expiries: types.baton_lease_expiries_total,
				reviews: types.baton_reviews_total,
				cards: types.baton_cards,
				agents: types.baton_agents,
				claim: types.baton_claim_duration_seconds,
				mcp: types.baton_mcp_call_duration_seconds,
				build: types.baton_build_info,
				cpu: types.process_cpu_seconds_total,
				heap: types.nodejs_heap_size_used_bytes,
			},
			{
				claims: 'COUNTER',
				completions: 'COUNTER',
				failures: 'COUNTER',
				expiries: 'COUNTER',
				reviews: 'COUNTER',
				cards: 'GAUGE',
				agents: 'GAUGE',
				claim: 'HISTOGRAM',
				mcp: 'HISTOGRAM',
				build: 'GAUGE',
				cpu: 'COUNTER',
				heap: 'GAUGE',
			},
		);
		assert.equal(sample(families, 'baton_claims_total'), 4);
		assert.equal(sample(families, 'baton_completions_total'), 1);
		assert.equal(sample(families, 'baton_failures_total'), 1);
		assert.equal(sample(families, 'baton_reviews_total', { outcome: 'approved' }), 0);

		// The card gauges by project and status; summed by status they are card/stats' numbers.
		const cards = family(families, 'baton_cards').metrics.map(
			m => `${m.labels?.project}|${m.labels?.status}=${m.value}`,
		);
		assert.deepEqual(cards.sort(), [
			'github.com/acme/api|blocked=1',
			'github.com/acme/api|claimed=1',
			'github.com/acme/web|done=1',
			'github.com/acme/web|ready=1',
			// A status no card is in still has its sample (project ""), so sum by (status) sees it.
			'|ready=1',
			'|review=0',
		]);
		const stats: Result<'card/stats'> = await human.request('card/stats', {});
		assert.deepEqual(stats.counts, { ready: 2, claimed: 1, review: 0, blocked: 1, done: 1 });
		for (const [status, n] of Object.entries(stats.counts)) {
			const sum = family(families, 'baton_cards')
				.metrics.filter(m => m.labels?.status === status)
				.reduce((total, m) => total + Number(m.value), 0);
			assert.equal(sum, n, `sum of baton_cards{status="${status}"}`);
		}
		assert.equal(sample(families, 'baton_cards_claimable'), stats.claimable);
		// Open cards by label: the done M2 is not counted; the only label is `label`, never a card id.
		assert.equal(family(families, 'baton_open_cards_by_label').type, 'GAUGE');
		assert.equal(sample(families, 'baton_open_cards_by_label', { label: 'ui' }), 2);
		assert.equal(sample(families, 'baton_open_cards_by_label', { label: 'api' }), 1);
		assert.match(text, /^baton_open_cards_by_label\{label="ui"\} 2$/m);
		for (const m of family(families, 'baton_open_cards_by_label').metrics) {
			assert.deepEqual(Object.keys(m.labels ?? {}), ['label']);
		}
		assert.doesNotMatch(
			text
				.split('\n')
				.filter(l => l.startsWith('baton_open_cards_by_label'))
				.join('\n'),
			/M\d/,
			'no card id in the series',
		);
		assert.equal(sample(families, 'baton_agents', { health: 'healthy' }), 1);
		assert.equal(sample(families, 'baton_agents', { health: 'dead' }), 0);
		assert.equal(sample(families, 'baton_store_up'), 1);
		assert.equal(sample(families, 'baton_event_seq'), stats.lastSeq);

		const claim = histogram(text, 'baton_claim_duration_seconds', 'result', 'card');
		assert.equal(claim.count, '4');
		const buckets = claim.buckets ?? {};
		assert.equal(buckets['+Inf'], '4');
		assert.ok('0.001' in buckets && '0.05' in buckets && '5' in buckets, 'ms-scale buckets');
		const sum = Number(claim.sum);
		assert.ok(sum > 0 && sum < 5, `claim time ${sum} s`);
		assert.ok(!text.includes('baton_claim_duration_seconds_count{result="none"}'), 'no empty claim yet');

		const mcpCount = (method: string): string | undefined =>
			histogram(text, 'baton_mcp_call_duration_seconds', 'method', method).count;
		assert.equal(mcpCount('card/claim'), '4');
		assert.equal(mcpCount('card/complete'), '1');
		assert.equal(mcpCount('card/fail'), '1');
		assert.ok(!text.includes('method="card/create"'), 'the test client is not an MCP session');

		const build = family(families, 'baton_build_info').metrics[0];
		const pkg = JSON.parse(readFileSync(`${__dirname}/../../package.json`, 'utf8')) as { version: string };
		assert.deepEqual(build?.labels, { version: pkg.version, mode: 'pglite' });
		console.log(
			`# claims 4, completions 1, failures 1, lease expiries 1; claim time sum ${(sum * 1000).toFixed(1)} ms; ${families.length} families`,
		);
	});
});

describe('/metrics of two hubs on one PostgreSQL (team mode)', () => {
	let shared: SharedHubs;

	async function scrapeHub(hub: HubProcess): Promise<PrometheusFamily[]> {
		const token = readFileSync(hub.paths.metricsToken, 'utf8').trim();
		const answer = await hubHttp(hub.port, '/metrics', { headers: { Authorization: `Bearer ${token}` } });
		assert.equal(answer.status, 200, answer.body);
		return parsePrometheusTextFormat(answer.body);
	}

	before(async () => {
		shared = await startSharedHubs(2, uniqueSchema());
	});

	after(async () => {
		await shared.stop();
	});

	it('counts each commit on the hub that made it (sum over hubs), and both see the same cards', async () => {
		const [a, b] = shared.dirs;
		const onA = await client(a ?? '', { client: 'mcp', agent: { id: 'team-a' } });
		const onB = await client(b ?? '', { client: 'mcp', agent: { id: 'team-b' } });
		try {
			await onA.request('card/create', {
				cards: [
					{ id: 'T1', title: 'one' },
					{ id: 'T2', title: 'two' },
				],
			});
			const first = await onA.request('card/claim', { cardId: 'T1' });
			const second = await onB.request('card/claim', { cardId: 'T2' });
			await onB.request('card/complete', { cardId: 'T2', epoch: second.lease?.epoch });
			assert.ok(first.card && second.card);
			// Hub B's pump must have seen hub A's commits before its gauges can agree (NOTIFY, then a read).
			const [hubA, hubB] = shared.hubs;
			assert.ok(hubA && hubB);
			let fromA: PrometheusFamily[] = [];
			let fromB: PrometheusFamily[] = [];
			await waitFor(async () => {
				[fromA, fromB] = await Promise.all([scrapeHub(hubA), scrapeHub(hubB)]);
				return (
					sample(fromA, 'baton_cards', { status: 'done' }) === 1 &&
					sample(fromB, 'baton_cards', { status: 'done' }) === 1
				);
			});
			assert.deepEqual(
				[fromA, fromB].map(f => [sample(f, 'baton_claims_total'), sample(f, 'baton_completions_total')]),
				[
					[1, 0],
					[1, 1],
				],
			);
			for (const status of ['ready', 'claimed', 'done']) {
				assert.equal(sample(fromA, 'baton_cards', { status }), sample(fromB, 'baton_cards', { status }), status);
			}
			assert.equal(sample(fromA, 'baton_cards', { status: 'claimed' }), 1);
			assert.deepEqual(family(fromB, 'baton_build_info').metrics[0]?.labels?.mode, 'postgres');
		} finally {
			onA.close();
			onB.close();
		}
	});
});
