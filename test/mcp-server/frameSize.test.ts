/**
 * Sizes agree end to end: a create the schema accepts but no frame can carry — 200 cards of
 * 60 KB bodies, a 12 MB message — is refused at once with too_large, its size, the limit and how to
 * split it, through a real MCP agent (whose server then still answers) and through `baton create
 * --file`; no reconnect storm reaches the hub's log, and nothing was created.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hubPaths } from '../../core/paths';
import { type Agent, cleanupDataDir, ensureBuilt, runBaton, startAgent, tempDataDir, textOf } from '../helpers/mcp';

const plan = Array.from({ length: 200 }, (_, i) => ({
	id: `big-${i}`,
	title: `Big card ${i}`,
	body: 'x'.repeat(60_000),
}));

describe('requests larger than a frame', () => {
	let dataDir: string;
	let agent: Agent;

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		agent = await startAgent(dataDir, { clientName: 'size-agent' });
	});
	after(async () => {
		await agent.close();
		await cleanupDataDir(dataDir);
	});

	it('MCP: one too_large answer before any request timeout, and the server answers the next call', async () => {
		const started = Date.now();
		const r = await agent.call('create', { cards: plan });
		const took = Date.now() - started;
		assert.equal(r.isError, true);
		const text = textOf(r);
		assert.match(text, /too_large/);
		assert.match(text, /card\/create request is 11\.\d MB encoded, over the 8\.0 MB a Baton message may be/);
		assert.match(text, /Send the 200 cards in several requests of about \d+ cards each/);
		// Refused before sending: well under the 15 s request timeout that a frame sent and dropped by the
		// hub would wait out (parsing and checking 12 MB took 5.2 s on a loaded 2-core machine).
		assert.ok(took < 12_000, `answered in ${took} ms`);
		const list = await agent.json<{ cards: unknown[] }>('list', {});
		assert.equal(list.cards.length, 0, 'nothing was created');
		const fits = await agent.json<{ cards: unknown[] }>('create', { cards: plan.slice(0, 100) });
		assert.equal(fits.cards.length, 100, 'a plan that fits goes through');
	});

	it('CLI: create --file refuses with the size and exits 1, without re-sending', async () => {
		const file = join(dataDir, 'plan.json');
		writeFileSync(file, JSON.stringify(plan.map(c => ({ ...c, id: `cli-${c.id}` }))));
		const started = Date.now();
		const r = await runBaton(['create', '--file', file], { dataDir });
		assert.equal(r.code, 1, r.stdout);
		assert.match(r.stderr, /over the 8\.0 MB a Baton message may be\. Send the 200 cards in several requests/);
		assert.ok(Date.now() - started < 12_000);
		const log = readFileSync(hubPaths(dataDir).hubLog, 'utf8');
		assert.ok(!log.includes('Max payload size exceeded'), 'no oversized frame ever reached the hub');
	});
});
