/**
 * The lifecycle rules through the faces users touch: an MCP agent (real SDK client over stdio)
 * holds a card built on another; `baton reopen` (the CLI in process: runCliHere) refuses, naming it,
 * and changes nothing; `--force` ends the claim, and the agent's next tool call is refused with
 * lease_lost saying why. `baton settings` and the per-card policy flags; a release through MCP gives
 * its attempt back; a failed card shows as failed in `baton show`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
	type Agent,
	type CliResult,
	cleanupDataDir,
	ensureBuilt,
	runCliHere,
	startAgent,
	tempDataDir,
	textOf,
} from '../helpers/mcp';

let dataDir: string;
const agents: Agent[] = [];

/** The CLI in process (runCliHere): its words and exit codes; the bundle end to end is cliRun.test.ts's. */
function baton(args: string[]): Promise<CliResult> {
	return runCliHere(args, { dataDir, env: { BATON_AGENT: 'cli-human' } });
}

async function json<T = Record<string, unknown>>(args: string[]): Promise<T> {
	const r = await baton([...args, '--json']);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as T;
}

interface Card {
	id: string;
	status: string;
	unmetDeps: number;
	attempts: number;
	failed?: boolean;
	backoffSeconds?: number | null;
	stallReleaseSeconds?: number | null;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
});

after(async () => {
	for (const a of agents) {
		await a.close();
	}
	await cleanupDataDir(dataDir);
});

describe('lifecycle through the CLI and MCP', () => {
	it('reopen refuses while an agent builds on the card; forced, the agent learns why on its next call', async () => {
		await json(['create', 'Schema', '--id', 'A']);
		await json(['create', 'Migrate data', '--id', 'B', '--depends-on', 'A']);
		await json(['complete', 'A', '--force']);
		const agent = await startAgent(dataDir, { clientName: 'agent-b' });
		agents.push(agent);
		const claimed = await agent.json<{ card: Card }>('claim', { cardId: 'B' });
		assert.equal(claimed.card.id, 'B');

		const refused = await baton(['reopen', 'A', '--json']);
		assert.equal(refused.code, 1, refused.stdout);
		const error = (JSON.parse(refused.stdout) as { error: { code: string; message: string } }).error;
		assert.equal(error.code, 'has_dependents');
		assert.match(error.message, /B \(claimed by .+\) was built on it\. Reopen with force/);
		assert.equal((await json<{ card: Card }>(['show', 'A'])).card.status, 'done', 'a refused reopen changes nothing');

		const human = await baton(['reopen', 'A', '--force', '--reason', 'wrong column type']);
		assert.equal(human.code, 0, human.stderr);
		assert.match(human.stdout, /Claims ended \(waiting for A again\): B/);
		const b = (await json<{ card: Card }>(['show', 'B'])).card;
		assert.equal(b.status, 'ready');
		assert.equal(b.unmetDeps, 1);

		const next = await agent.call('heartbeat', { cardId: 'B', progress: 40 });
		assert.equal(next.isError, true);
		assert.match(textOf(next), /^lease_lost: .*dependency A was reopened \(wrong column type\)/);
		const complete = await agent.call('complete', { cardId: 'B', result: 'done anyway' });
		assert.equal(complete.isError, true, 'the zombie cannot complete it');
		assert.equal((await json<{ card: Card }>(['show', 'B'])).card.status, 'ready');
	});

	it('settings and per-card policies; a release gives its attempt back; a failed card says so', async () => {
		const shown = await baton(['settings']);
		assert.match(shown.stdout, /retry backoff\s+30 s, doubling per failed attempt up to 3600 s/);
		assert.match(shown.stdout, /stall release\s+off/);
		const set = await json<Record<string, number>>([
			'settings',
			'--backoff-seconds',
			'0',
			'--stall-release-seconds',
			'600',
		]);
		assert.deepEqual(set, {
			backoffSeconds: 0,
			backoffMaxSeconds: 3600,
			stallReleaseSeconds: 600,
			review: 'none',
			progressEventsPerCard: 50,
			progressEventDays: 90,
			agentRetentionDays: 7,
			idPrefix: 'CARD',
			maxHeld: null,
			agingHours: null,
		});
		const bad = await baton(['settings', '--backoff-seconds', 'soon']);
		assert.equal(bad.code, 2);
		assert.match(bad.stderr, /--backoff-seconds must be a whole number of seconds/);

		const created = await json<{ cards: Card[] }>([
			'create',
			'Flaky',
			'--id',
			'F',
			'--max-attempts',
			'1',
			'--stall-release-seconds',
			'0',
		]);
		assert.equal(created.cards[0]?.stallReleaseSeconds, 0);
		const edited = await json<{ card: Card }>([
			'edit',
			'F',
			'--backoff-seconds',
			'5',
			'--stall-release-seconds',
			'default',
		]);
		assert.equal(edited.card.backoffSeconds, 5);
		assert.equal(edited.card.stallReleaseSeconds, null);

		const agent = await startAgent(dataDir, { clientName: 'agent-f' });
		agents.push(agent);
		await agent.json('claim', { cardId: 'F' });
		const released = await agent.json<{ card: Card }>('release', { cardId: 'F', reason: 'not my area' });
		assert.equal(released.card.attempts, 0, 'handing a card back is not a failed attempt');
		await agent.json('claim', { cardId: 'F' });
		const failed = await agent.json<{ card: Card }>('fail', { cardId: 'F', reason: 'the build server is down' });
		assert.equal(failed.card.status, 'blocked');
		assert.equal(failed.card.failed, true);
		const show = await baton(['show', 'F']);
		assert.match(show.stdout, /failed\s+failed 1 of 1 attempts; last: the build server is down/);
	});
});
