/**
 * The CLI against a real hub: --json shapes of every subcommand, exit codes (0 success, 1 refused
 * with the error as JSON on stdout, 2 usage), human tables, and a lossless export -> import round trip
 * into a fresh data dir. Commands run in process (runCliHere: the CLI's own part, without starting the
 * bundle per command); the built dist/baton.js runs the plan from stdin, the export to stdout and the
 * hub's stop, so the program as users run it is proven end to end here too.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type CliResult, cleanupDataDir, ensureBuilt, runBaton, runCliHere, tempDataDir } from '../helpers/mcp';

let dataDir: string;
const extraDirs: string[] = [];

/** `baton ...args`: in process, or through the bundle for stdin (`input`) and `bundle: true`. */
function baton(
	args: string[],
	options: { input?: string; dir?: string; env?: Record<string, string>; bundle?: boolean } = {},
): Promise<CliResult> {
	const run = { dataDir: options.dir ?? dataDir, env: { BATON_AGENT: 'cli-tester', ...options.env } };
	return options.input === undefined && options.bundle !== true
		? runCliHere(args, run)
		: runBaton(args, { ...run, ...(options.input === undefined ? {} : { input: options.input }) });
}

async function json<T = Record<string, unknown>>(
	args: string[],
	options: { input?: string; dir?: string; bundle?: boolean } = {},
): Promise<T> {
	const r = await baton([...args, '--json'], options);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as T;
}

async function refused(args: string[], code: string): Promise<{ code: string; message: string }> {
	const r = await baton([...args, '--json']);
	assert.equal(r.code, 1, `baton ${args.join(' ')} should be refused: ${r.stdout} ${r.stderr}`);
	const body = JSON.parse(r.stdout) as { error: { code: string; message: string } };
	assert.equal(body.error.code, code, body.error.message);
	return body.error;
}

interface Card {
	id: string;
	status: string;
	dependsOn: string[];
	claimOwner: string | null;
	claimEpoch: number;
	[k: string]: unknown;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
});

after(async () => {
	await cleanupDataDir(dataDir);
	for (const d of extraDirs) {
		await cleanupDataDir(d);
	}
});

describe('baton CLI', () => {
	it('hub status refuses (exit 1) and hub stop is a no-op (exit 0) while no hub runs', async () => {
		const status = await refused(['hub', 'status'], 'unavailable');
		assert.match(status.message, /No Baton hub is running/);
		assert.deepEqual(await json(['hub', 'stop']), { ok: true, running: false });
	});

	it('create: one card with every field, and a plan from stdin', async () => {
		const one = await json<{ cards: Card[] }>([
			'create',
			'Write the parser',
			'--id',
			'P1',
			'--phase',
			'build',
			'--priority',
			'7',
			'--requires',
			'lang:ts',
			'--acceptance',
			'parses a, b and c',
			'--acceptance',
			'fails cleanly',
			'--body',
			'Details **here**',
			'--max-attempts',
			'2',
			'--idempotency-key',
			'k-P1',
		]);
		assert.equal(one.cards.length, 1);
		const card = one.cards[0]!;
		assert.equal(card.id, 'P1');
		assert.equal(card.priority, 7);
		assert.deepEqual(card.requires, ['lang:ts']);
		assert.deepEqual(card.acceptance, ['parses a, b and c', 'fails cleanly']);
		assert.equal(card.maxAttempts, 2);
		const again = await json<{ cards: Card[] }>(['create', 'Write the parser', '--idempotency-key', 'k-P1']);
		assert.equal(again.cards[0]!.id, 'P1', 'the idempotency key returns the same card');
		const plan = await json<{ cards: Card[] }>(['create', '--file', '-'], {
			input: JSON.stringify({
				cards: [
					{ id: 'Q1', title: 'Base', phase: 'plan' },
					{ id: 'Q2', title: 'Middle', dependsOn: ['Q1'] },
					{ id: 'Q3', title: 'Top', dependsOn: ['Q2', 'Q1'] },
				],
			}),
		});
		assert.deepEqual(
			plan.cards.map(c => c.id),
			['Q1', 'Q2', 'Q3'],
		);
	});

	it('list and show: --json shapes and a human table', async () => {
		// --status takes list's words: ready is claimable now; Q2 and Q3 wait on dependencies.
		const list = await json<{ cards: Card[]; nextCursor?: string }>(['list', '--status', 'ready']);
		assert.deepEqual(list.cards.map(c => c.id).sort(), ['P1', 'Q1']);
		const waiting = await json<{ cards: Card[] }>(['list', '--status', 'waiting']);
		assert.deepEqual(waiting.cards.map(c => c.id).sort(), ['Q2', 'Q3']);
		const page = await json<{ cards: Card[]; nextCursor?: string }>(['list', '--limit', '2']);
		assert.equal(page.cards.length, 2);
		assert.equal(typeof page.nextCursor, 'string');
		const all = await json<{ cards: Card[] }>(['list', '--limit', '1', '--all']);
		assert.equal(all.cards.length, 4);
		const ready = await json<{ cards: Card[] }>(['list', '--ready']);
		const readyIds = ready.cards.map(c => c.id);
		assert.ok(readyIds.includes('Q1') && !readyIds.includes('Q2') && !readyIds.includes('Q3'), readyIds.join());
		const human = await baton(['list']);
		assert.equal(human.code, 0);
		const lines = human.stdout.trimEnd().split('\n');
		assert.match(lines[0]!, /^ID\s+STATUS\s+PRI\s+PHASE\s+OWNER\s+WAITS\s+TITLE$/);
		const titleColumn = lines[0]!.indexOf('TITLE');
		for (const line of lines.slice(1)) {
			assert.ok(line.length > titleColumn, line);
			assert.notEqual(line[titleColumn - 1], undefined);
		}
		const shown = await json<{
			card: Card;
			dependencies: unknown[];
			dependents: unknown[];
			history: unknown[];
			attempts: unknown[];
		}>(['show', 'Q2']);
		assert.deepEqual(Object.keys(shown).sort(), [
			'attempts',
			'card',
			'dependencies',
			'dependents',
			'history',
			'messages',
		]);
		// With what a face needs to say waiting or deferred for them (core/rules/claimable.ts refStateWord).
		assert.deepEqual(shown.dependencies, [
			{ id: 'Q1', title: 'Base', status: 'ready', unmetDeps: 0, deferUntil: null },
		]);
		assert.deepEqual(shown.dependents, [{ id: 'Q3', title: 'Top', status: 'ready', unmetDeps: 2, deferUntil: null }]);
		const humanShow = await baton(['show', 'Q2']);
		assert.match(humanShow.stdout, /^id\s+Q2$/m);
		assert.match(humanShow.stdout, /^status\s+waiting on Q1$/m);
		assert.match(humanShow.stdout, /Depends on:\n {2}Q1 {2}ready {2}Base/);
		assert.match(humanShow.stdout, /Dependents:\n {2}Q3 {2}waiting {2}Top/);
	});

	it('claim -> heartbeat -> complete as a CLI agent', async () => {
		const claim = await json<{ card: Card; lease: { epoch: number } }>(['claim', 'Q1', '--ttl', '120']);
		assert.equal(claim.card.claimOwner, 'cli-tester');
		const hb = await json<{ card: Card; lease: { epoch: number } }>([
			'heartbeat',
			'Q1',
			'--progress',
			'60',
			'--note',
			'nearly',
			'--epoch',
			String(claim.lease.epoch),
		]);
		assert.equal(hb.card.progress, 60);
		const done = await json<{ card: Card; unblocked: string[] }>(['complete', 'Q1', '--result', 'done']);
		assert.equal(done.card.status, 'done');
		assert.deepEqual(done.unblocked, ['Q2']);
		const nothing = await json<{ card: null; lease: null; reason: string }>(['claim', '--phase', 'nowhere']);
		assert.equal(nothing.card, null);
		assert.equal(typeof nothing.reason, 'string');
	});

	it('release, fail, block, unblock, reopen, reclaim, edit, link, unlink, delete', async () => {
		await json(['claim', 'Q2']);
		assert.equal((await json<{ card: Card }>(['release', 'Q2', '--reason', 'later'])).card.status, 'ready');
		await json(['claim', 'Q2']);
		const failed = await json<{ card: Card }>(['fail', 'Q2', '--reason', 'flaky', '--backoff', '0']);
		assert.equal(failed.card.status, 'ready');
		assert.equal((await json<{ card: Card }>(['block', 'Q2', '--reason', 'needs design'])).card.status, 'blocked');
		assert.equal((await json<{ card: Card }>(['unblock', 'Q2'])).card.status, 'ready');
		await json(['claim', 'Q2', '--agent', 'someone-else']);
		const reclaimed = await json<{ cards: Card[] }>(['reclaim', 'Q2', '--reason', 'stuck']);
		assert.deepEqual(
			reclaimed.cards.map(c => c.id),
			['Q2'],
		);
		assert.equal(reclaimed.cards[0]!.status, 'ready');
		await json(['claim', 'Q2']);
		const handOver = await json<{ card: Card; next: { card: Card | null; reason?: string } }>([
			'complete',
			'Q2',
			'--next',
			'--phase',
			'nowhere',
		]);
		assert.equal(handOver.card.status, 'done');
		assert.equal(handOver.next.card, null, 'nothing to claim next in an empty phase');
		assert.match(handOver.next.reason ?? '', /No cards are ready|Nothing claimable/);
		assert.equal((await json<{ card: Card }>(['reopen', 'Q2', '--reason', 'regressed'])).card.status, 'ready');
		const edited = await json<{ card: Card }>(['edit', 'Q2', '--title', 'Middle, renamed', '--priority', '3']);
		assert.equal(edited.card.title, 'Middle, renamed');
		assert.equal(edited.card.priority, 3);
		await json(['create', 'Scratch', '--id', 'Z1']);
		assert.deepEqual((await json<{ card: Card }>(['link', 'Z1', 'Q2', 'P1'])).card.dependsOn.sort(), ['P1', 'Q2']);
		assert.deepEqual((await json<{ card: Card }>(['unlink', 'Z1', 'P1'])).card.dependsOn, ['Q2']);
		assert.deepEqual(await json(['delete', 'Z1']), { deleted: 'Z1' });
	});

	it('refusals exit 1 with the error as JSON on stdout', async () => {
		await refused(['show', 'NOPE'], 'not_found');
		await refused(['complete', 'NOPE'], 'not_found');
		const cycle = await refused(['link', 'Q1', 'Q3'], 'cycle');
		assert.match(cycle.message, /Q1/);
		await refused(['delete', 'Q1'], 'has_dependents');
		await refused(['create', 'x'.repeat(201)], 'invalid_input');
		await refused(['unblock', 'Q3'], 'invalid_transition');
		const human = await baton(['show', 'NOPE']);
		assert.equal(human.code, 1);
		assert.equal(human.stdout, '');
		assert.match(human.stderr, /NOPE/);
	});

	it('usage errors exit 2', async () => {
		const r = await baton(['list', '--limit', 'many']);
		assert.equal(r.code, 2);
		assert.match(r.stderr, /--limit must be a whole number/);
		assert.match(r.stderr, /Usage: baton list/);
		const stray = await baton(['complete', 'Q1', '--phase', 'api']);
		assert.equal(stray.code, 2, 'a --next option without --next is a usage error, not silently ignored');
		assert.match(stray.stderr, /add --next/);
	});

	it('stats, events, agents, backup, hub status, board', async () => {
		const stats = await json<{ counts: Record<string, number>; total: number; lastSeq: number }>(['stats']);
		assert.equal(stats.total, 4);
		assert.deepEqual(Object.keys(stats.counts).sort(), ['blocked', 'claimed', 'done', 'ready', 'review']);
		const events = await json<{ events: { seq: number; type: string }[]; lastSeq: number }>(['events', '--after', '0']);
		assert.equal(events.lastSeq, stats.lastSeq);
		assert.deepEqual(
			events.events.map(e => e.seq),
			events.events.map((_, i) => i + 1),
		);
		const q1 = await json<{ events: { cardId: string }[] }>(['events', '--after', '0', '--card', 'Q1']);
		assert.ok(q1.events.length > 0 && q1.events.every(e => e.cardId === 'Q1'));
		const agents = await json<{ agents: { id: string }[] }>(['agents']);
		assert.ok(agents.agents.some(a => a.id === 'cli-tester'));
		const backup = await json<{ path: string; cards: number; bytes: number }>(['backup']);
		assert.equal(backup.cards, 4);
		assert.ok(backup.bytes > 0);
		const status = await json<{ pid: number; dataDir: string; mode: string }>(['hub', 'status']);
		assert.equal(status.mode, 'pglite');
		const board = await json<{ url: string }>(['board', '--no-open']);
		assert.match(board.url, /^http:\/\/127\.0\.0\.1:\d+\/board\?ticket=/);
		assert.doesNotMatch(board.url, new RegExp(readFileSync(join(dataDir, 'run', 'token'), 'utf8').trim()));
	});

	it('export -> import into a fresh data dir is lossless', async () => {
		// Cover a held card (lease, epoch), a blocked one, a done one with a result, deps and requires.
		await json(['create', 'Held', '--id', 'H1', '--requires', 'lang:go', '--phase', 'held']);
		await json(['claim', 'H1', '--agent', 'holder', '--capabilities', 'lang:go']);
		await json(['heartbeat', 'H1', '--agent', 'holder', '--progress', '20', '--note', 'started']);
		await json(['create', 'Parked', '--id', 'K1', '--body', 'multi\nline\tbody "quoted"']);
		await json(['block', 'K1', '--reason', 'waiting on legal']);
		const file = join(dataDir, 'export.jsonl');
		const exported = await json<{ path: string; cards: number }>(['export', '--out', file]);
		assert.equal(exported.cards, 6);
		const fresh = tempDataDir();
		extraDirs.push(fresh);
		const imported = await json<{ imported: number; skipped: number }>(['import', file], { dir: fresh });
		assert.deepEqual(imported, { imported: 6, skipped: 0 });
		const again = await json<{ imported: number; skipped: number }>(['import', file], { dir: fresh });
		assert.deepEqual(again, { imported: 0, skipped: 6 }, 'a second import skips what exists');
		const stdoutExport = await baton(['export'], { dir: fresh, bundle: true });
		assert.equal(stdoutExport.code, 0);
		const cardsOf = (text: string): unknown[] =>
			text
				.trim()
				.split('\n')
				.slice(1)
				.map(l => JSON.parse(l) as { id: string })
				.sort((a, b) => a.id.localeCompare(b.id));
		const original = cardsOf(readFileSync(file, 'utf8'));
		assert.deepEqual(cardsOf(stdoutExport.stdout), original);
		console.log(`export -> import round trip: ${original.length} cards identical field by field`);
		writeFileSync(
			join(fresh, 'bad.jsonl'),
			'{"baton":"export","version":1,"protocol":1,"exportedAt":"x","cards":1}\n{"id":"X"}\n',
		);
		const bad = await baton(['import', join(fresh, 'bad.jsonl'), '--json'], { dir: fresh });
		assert.equal(bad.code, 1);
		assert.match(bad.stdout, /Line 2/);
	});

	it('hub stop stops the hub (exit 0)', async () => {
		const status = await json<{ pid: number }>(['hub', 'status']);
		assert.deepEqual(await json(['hub', 'stop'], { bundle: true }), { ok: true, running: true });
		const deadline = Date.now() + 10_000;
		while (Date.now() < deadline) {
			try {
				process.kill(status.pid, 0);
			} catch {
				return;
			}
			await new Promise(r => setTimeout(r, 50));
		}
		assert.fail(`hub ${status.pid} still running`);
	});
});
