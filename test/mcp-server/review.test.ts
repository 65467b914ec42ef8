/**
 * The review gate through the real faces against one real hub: MCP agents over
 * stdio (the SDK client) complete cards into review, take agent review work with `claim {review: true}`
 * and decide with the `review` tool; a human approves and rejects (the CLI in process: runCliHere) with
 * `baton approve` / `baton reject`, creates with `--review` and lists `--status review`; the next
 * claimer reads the reviewer's note as `handoff`. Every refusal names the problem and changes nothing.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type Agent, cleanupDataDir, ensureBuilt, runCliHere, startAgent, tempDataDir, textOf } from '../helpers/mcp';

let dataDir: string;
const agents: Agent[] = [];

/** The CLI in process (runCliHere): its words and exit codes; the bundle end to end is cliRun.test.ts's. */
function baton(args: string[]): ReturnType<typeof runCliHere> {
	return runCliHere(args, { dataDir, env: { BATON_AGENT: 'vscode:alice' } });
}

async function json<T>(args: string[]): Promise<T> {
	const r = await baton([...args, '--json']);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as T;
}

async function agent(id: string, capabilities?: string): Promise<Agent> {
	const a = await startAgent(dataDir, {
		env: { BATON_AGENT: id, ...(capabilities === undefined ? {} : { BATON_CAPABILITIES: capabilities }) },
	});
	agents.push(a);
	return a;
}

interface CardView {
	id: string;
	status: string;
	claimOwner?: string;
	handoff?: string;
	completedBy?: string;
	result?: string;
	version: number;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
});

after(async () => {
	await Promise.all(agents.map(a => a.close().catch(() => undefined)));
	await cleanupDataDir(dataDir);
});

describe('review gate through MCP and the CLI', () => {
	it('baton create --file --review gives the whole plan its review, except cards that say', async () => {
		const plan = join(dataDir, 'plan.json');
		writeFileSync(
			plan,
			JSON.stringify([
				{ id: 'P1', title: 'Schema' },
				{ id: 'P2', title: 'API', dependsOn: ['P1'], review: 'none' },
			]),
		);
		const created = await json<{ cards: (CardView & { review: string })[] }>([
			'create',
			'--file',
			plan,
			'--review',
			'human',
		]);
		assert.deepEqual(
			created.cards.map(c => [c.id, c.review]),
			[
				['P1', 'human'],
				['P2', 'none'],
			],
		);
		const oneCardFlag = await baton(['create', '--file', plan, '--priority', '3']);
		assert.equal(oneCardFlag.code, 2);
		assert.match(oneCardFlag.stderr, /only --review, --project and --base apply to the whole plan/);
		await json(['delete', 'P2']);
		await json(['delete', 'P1']);
	});

	let author: Agent;

	it('an agent completes a human-reviewed card into review; baton approve frees its dependent', async () => {
		await json(['create', 'Port the parser', '--id', 'H1', '--review', 'human', '--priority', '10']);
		await json(['create', 'Use the parser', '--id', 'H2', '--depends-on', 'H1']);
		author = await agent('claude-1');
		const claimed = await author.json<{ card: CardView }>('claim', { cardId: 'H1' });
		assert.equal(claimed.card.id, 'H1');
		const done = await author.json<{ card: CardView; unblocked: string[] }>('complete', {
			cardId: 'H1',
			result: 'commit abc1234',
		});
		assert.equal(done.card.status, 'review');
		assert.equal(done.card.completedBy, 'claude-1');
		assert.deepEqual(done.unblocked, []);
		const listed = await json<{ cards: CardView[] }>(['list', '--status', 'review']);
		assert.deepEqual(
			listed.cards.map(c => c.id),
			['H1'],
		);
		const shown = await baton(['show', 'H1']);
		assert.match(shown.stdout, /status +in review/);
		// The dependent waits: nothing claimable for a second agent yet.
		const other = await agent('codex-2');
		const none = await other.json<{ card: null; reason: string }>('claim', {});
		assert.equal(none.card, null);
		// An agent cannot approve a card that waits for a human.
		const refused = await other.call('review', { cardId: 'H1', approve: true });
		assert.equal(refused.isError, true);
		assert.match(textOf(refused), /waits for a human's review/);
		const approved = await json<{ card: CardView; unblocked: string[] }>([
			'approve',
			'H1',
			'--version',
			String(done.card.version),
		]);
		assert.equal(approved.card.status, 'done');
		assert.deepEqual(approved.unblocked, ['H2']);
		const next = await other.json<{ card: CardView }>('claim', {});
		assert.equal(next.card.id, 'H2');
		await other.json('release', { cardId: 'H2' });
	});

	it('baton reject sends it back with the note; the next claimer gets it as handoff', async () => {
		await json(['create', 'Write the docs', '--id', 'R1', '--review', 'human', '--priority', '20']);
		await author.json('claim', { cardId: 'R1' });
		await author.json('complete', { cardId: 'R1', result: 'first draft' });
		const noNote = await baton(['reject', 'R1']);
		assert.equal(noNote.code, 2, 'the note is required, like a missing argument');
		assert.match(noNote.stderr, /--note/);
		const stale = await baton(['approve', 'R1', '--version', '1']);
		assert.equal(stale.code, 1);
		assert.match(stale.stderr, /changed since you looked/);
		const sent = await json<{ card: CardView }>(['reject', 'R1', '--note', 'Cover the v2 API too.']);
		assert.equal(sent.card.status, 'ready');
		assert.equal(sent.card.handoff, 'Cover the v2 API too.');
		const again = await author.json<{ card: CardView; handoff?: string }>('claim', {});
		assert.equal(again.card.id, 'R1');
		assert.equal(again.handoff, 'Cover the v2 API too.');
		const shown = await author.json<{ attempts: { outcome: string; reason?: string }[] }>('show', { cardId: 'R1' });
		assert.deepEqual(
			shown.attempts.map(a => [a.outcome, a.reason]),
			[
				['changes requested', 'Cover the v2 API too.'],
				['active', undefined],
			],
		);
		await author.json('release', { cardId: 'R1' });
	});

	it('agent review: needs the review capability; never the own work; approve frees the dependent', async () => {
		await json(['create', 'Add the cache', '--id', 'A1', '--review', 'agent', '--priority', '30']);
		await json(['create', 'Benchmark the cache', '--id', 'A2', '--depends-on', 'A1']);
		await author.json('claim', { cardId: 'A1' });
		await author.json('complete', { cardId: 'A1', result: 'branch: feat/cache' });
		const noCapability = await author.call('claim', { review: true });
		assert.equal(noCapability.isError, true);
		assert.match(textOf(noCapability), /capability 'review'/);
		const own = await author.call('claim', { review: true, capabilities: ['review'] });
		assert.notEqual(own.isError, true);
		assert.match(textOf(own), /completed by you/);
		const reviewer = await agent('gemini-3', 'review');
		const took = await reviewer.json<{ card: CardView; lease: { epoch: number } }>('claim', { review: true });
		assert.equal(took.card.id, 'A1');
		assert.equal(took.card.status, 'review');
		assert.equal(took.card.claimOwner, 'gemini-3');
		const noNote = await reviewer.call('review', { cardId: 'A1', approve: false });
		assert.equal(noNote.isError, true);
		assert.match(textOf(noNote), /needs a note/);
		const approved = await reviewer.json<{ card: CardView; unblocked: string[] }>('review', {
			cardId: 'A1',
			approve: true,
			note: 'Looks right.',
		});
		assert.equal(approved.card.status, 'done');
		assert.deepEqual(approved.unblocked, ['A2']);
		const notInReview = await reviewer.call('review', { cardId: 'A1', approve: true });
		assert.equal(notInReview.isError, true);
		assert.match(textOf(notInReview), /not in review/);
		// A reviewer waiting for review work is woken by the next card entering review.
		await json(['create', 'Add the index', '--id', 'A3', '--review', 'agent', '--priority', '40']);
		await author.json('claim', { cardId: 'A3' });
		const started = Date.now();
		const waiting = reviewer.json<{ card: CardView | null }>('claim', { review: true, waitSeconds: 20 });
		await new Promise(r => setTimeout(r, 300));
		await author.json('complete', { cardId: 'A3', result: 'done' });
		const woken = await waiting;
		assert.equal(woken.card?.id, 'A3');
		assert.ok(Date.now() - started < 5_000, `woken after ${Date.now() - started} ms`);
		await reviewer.json('release', { cardId: 'A3' });
		assert.equal((await json<{ card: CardView }>(['show', 'A3'])).card.status, 'review');
		const events = await json<{ events: { type: string; cardId: string }[] }>(['events', '--card', 'A1']);
		assert.deepEqual(
			events.events.map(e => e.type).filter(t => t !== 'created'),
			['claimed', 'review_requested', 'claimed', 'approved'],
		);
	});
});
