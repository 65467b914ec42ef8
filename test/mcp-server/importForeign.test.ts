/**
 * `baton import --from beads|backlog-md|taskmaster` through the CLI (in process: runCliHere) and one
 * real hub: each fixture (Backlog.md and Taskmaster made by their own CLIs, beads
 * written from its format; test/fixtures/import/make.sh) round-trips with its counts printed and
 * checked against the store; a dry run writes nothing; a re-import creates nothing; a clashing id is
 * mapped; hostile sources are refused naming the line or file, and nothing of them is applied. Pure
 * mapping rules: test/core/importers.test.ts.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { collectExport } from '../../core/formats/export';
import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { client } from '../helpers/hub';
import { cleanupDataDir, ensureBuilt, runCliHere, tempDataDir } from '../helpers/mcp';

const fixtures = join(__dirname, '..', 'fixtures', 'import');

interface ImportAnswer {
	source: string;
	dryRun: boolean;
	imported: number;
	cards: number;
	dependencies: number;
	byStatus: Record<string, number>;
	already: number;
	mapped: { ref: string; id: string; kept: boolean }[];
	skips: { ref: string; where: string; reason: string }[];
}

describe('baton import --from', () => {
	let dataDir: string;
	let scratch: string;
	/** Reads go over one rpc connection (a CLI process per read would make this file slow). */
	let hub: RpcClient;
	// The CLI in process (runCliHere): its words and exit codes; the bundle end to end is cliRun.test.ts's.
	const baton = (args: string[]) => runCliHere(args, { dataDir, env: { BATON_AGENT: 'importer' } });
	const json = async <T>(args: string[]): Promise<T> => {
		const r = await baton([...args, '--json']);
		assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}${r.stdout}`);
		return JSON.parse(r.stdout) as T;
	};
	const cards = (): Promise<Card[]> =>
		collectExport(cursor => hub.request('data/export', cursor === undefined ? {} : { cursor }));
	const show = async (cardId: string): Promise<Card> => (await hub.request('card/get', { cardId })).card;
	/** An import that must be refused: exit 1 and the message matching (the caller checks the store). */
	const refused = async (args: string[], message: RegExp): Promise<void> => {
		const r = await baton([...args, '--json']);
		assert.equal(r.code, 1, `${args.join(' ')} should fail: ${r.stdout}${r.stderr}`);
		const body = JSON.parse(r.stdout) as { error: { message: string } };
		assert.match(body.error.message, message);
		console.log(`refused: ${body.error.message}`);
	};

	/** Dry run, import, re-import of one source; returns the import's answer. */
	async function roundTrip(from: string, path: string): Promise<ImportAnswer> {
		const before = (await cards()).length;
		const dry = await json<ImportAnswer>(['import', '--from', from, path, '--dry-run']);
		assert.equal(dry.dryRun, true);
		assert.equal(dry.imported, 0);
		assert.equal((await cards()).length, before, 'a dry run writes nothing');
		const done = await json<ImportAnswer>(['import', '--from', from, path]);
		assert.deepEqual({ ...done, dryRun: true, imported: 0 }, dry, 'the dry run showed exactly what the import did');
		assert.equal(done.imported, done.cards);
		const store = await cards();
		assert.equal(store.length, before + done.cards);
		const mine = new Set(done.mapped.map(m => m.id));
		const imported = store.filter(c => mine.has(c.id));
		const byStatus: Record<string, number> = {};
		for (const c of imported) {
			byStatus[c.status] = (byStatus[c.status] ?? 0) + 1;
		}
		const deps = imported.reduce((n, c) => n + c.dependsOn.length, 0);
		console.log(
			`${from}: ${imported.length} cards, ${deps} dependencies, statuses ${JSON.stringify(byStatus)}, ${done.skips.length} skipped`,
		);
		assert.equal(deps, done.dependencies);
		assert.deepEqual(byStatus, Object.fromEntries(Object.entries(done.byStatus).filter(([, n]) => n > 0)));
		const again = await json<ImportAnswer>(['import', '--from', from, path]);
		assert.equal(again.imported, 0, 'a re-import creates nothing');
		assert.equal(again.already, done.cards);
		assert.equal((await cards()).length, store.length);
		return done;
	}

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		scratch = mkdtempSync('/tmp/bt-import-');
		// The CLI starts the hub; everything after shares it.
		await json(['create', 'A card that was here first', '--id', 'bd-b2', '--no-project']);
		hub = await client(dataDir);
	});
	after(async () => {
		hub.close();
		await cleanupDataDir(dataDir);
		rmSync(scratch, { recursive: true, force: true });
	});

	it('imports beads, mapping an id the store already has and making sub-tasks children of their epic', async () => {
		const r = await roundTrip('beads', join(fixtures, 'beads', 'issues.jsonl'));
		assert.deepEqual(
			{ cards: r.cards, dependencies: r.dependencies, byStatus: r.byStatus },
			{ cards: 5, dependencies: 2, byStatus: { ready: 3, claimed: 0, review: 0, blocked: 1, done: 1 } },
		);
		assert.deepEqual(
			r.mapped.filter(m => !m.kept),
			[{ ref: 'bd-b2', id: 'bd-b2-2', kept: false }],
		);
		assert.equal(r.skips.length, 1, 'the tombstone is a reported skip');
		const shown = { card: await show('bd-c3') };
		assert.deepEqual(shown.card.dependsOn, ['bd-b2-2'], 'links follow the mapped id');
		assert.equal(shown.card.status, 'ready');
		assert.equal(shown.card.unmetDeps, 0, 'its dependency was closed in beads');
		const epic = { card: await show('bd-a1') };
		// Parent-child is containment, not a dependency.
		assert.deepEqual(epic.card.dependsOn, [], 'the epic is their parent, not their dependent');
		assert.equal(shown.card.parent, 'bd-a1');
		const totals = { card: await show('bd-b2-2') };
		assert.deepEqual(totals.card.acceptance, ['Totals match the invoice', 'Rounding is per line']);
		// Links that do not block: discovered-from and duplicates land on the card.
		const receipt = await show('bd-e5');
		assert.deepEqual([receipt.discoveredFrom, receipt.duplicates], ['bd-c3', ['bd-d4']]);
	});

	it('imports a Backlog.md project made by backlog.md', async () => {
		const r = await roundTrip('backlog-md', join(fixtures, 'backlog-md'));
		assert.deepEqual(
			{ cards: r.cards, dependencies: r.dependencies, byStatus: r.byStatus },
			{ cards: 6, dependencies: 3, byStatus: { ready: 5, claimed: 0, review: 0, blocked: 0, done: 1 } },
		);
		const login = { card: await show('TASK-2') };
		assert.deepEqual(login.card.acceptance, ['Valid credentials return a session', 'Invalid credentials return 401']);
		assert.equal(login.card.claimOwner, null, 'In Progress is not a claim');
		assert.deepEqual(login.card.labels, ['auth', 'backend']);
	});

	it('imports a Taskmaster tasks.json made by task-master-ai', async () => {
		const r = await roundTrip('taskmaster', join(fixtures, 'taskmaster', 'tasks.json'));
		assert.deepEqual(
			{ cards: r.cards, dependencies: r.dependencies, byStatus: r.byStatus },
			{ cards: 8, dependencies: 4, byStatus: { ready: 4, claimed: 0, review: 1, blocked: 1, done: 2 } },
		);
		// A folder is looked into for tasks.json; the human answer says nothing changed.
		const human = await baton(['import', '--from', 'taskmaster', join(fixtures, 'taskmaster')]);
		assert.match(human.stdout, /^Nothing to import from taskmaster: 8 items imported before; nothing changed\./);
		const api = { card: await show('3') };
		assert.deepEqual(api.card.dependsOn, ['2']);
		assert.equal((await show('3.1')).parent, '3');
	});

	it('refuses hostile and malformed sources, naming the line or file, and applies nothing', async () => {
		// Each source is refused by its own CLI process, side by side; none of them may change the store.
		const checks: Promise<void>[] = [];
		const file = (name: string, text: string): string => {
			const path = join(scratch, name);
			writeFileSync(path, text);
			return path;
		};
		const issue = (id: string, more: Record<string, unknown> = {}): string =>
			JSON.stringify({ id, title: `Issue ${id}`, status: 'open', priority: 2, ...more });
		const blocks = (id: string, on: string) => ({
			dependencies: [{ issue_id: id, depends_on_id: on, type: 'blocks' }],
		});

		checks.push(
			refused(
				[
					'import',
					'--from',
					'beads',
					file('broken.jsonl', [issue('h-1'), issue('h-2'), '{"id": "h-3", "title"'].join('\n')),
				],
				/^broken\.jsonl line 3: not a JSON object/,
			),
		);
		checks.push(
			refused(
				[
					'import',
					'--from',
					'beads',
					file('cycle.jsonl', [issue('c-1', blocks('c-1', 'c-2')), issue('c-2', blocks('c-2', 'c-1'))].join('\n')),
				],
				/cycle: c-1 → c-2 → c-1|cycle: c-2 → c-1 → c-2/,
			),
		);
		checks.push(
			refused(
				['import', '--from', 'beads', file('status.jsonl', [issue('s-1'), issue('s-2', { status: 'wip' })].join('\n'))],
				/status\.jsonl line 2: issue s-2 has status "wip"/,
			),
		);
		checks.push(
			refused(
				['import', '--from', 'beads', file('twice.jsonl', [issue('d-1'), issue('d-2'), issue('d-1')].join('\n'))],
				/twice\.jsonl line 3: id "d-1" appears twice \(first at twice\.jsonl line 1\)/,
			),
		);
		const huge = file('huge.jsonl', `${issue('big-1')}\n${' '.repeat(4 * 1024 * 1024)}\n`);
		checks.push(
			refused(['import', '--from', 'beads', huge], /huge\.jsonl is \d+ bytes; an import reads at most 4194304/),
		);

		const project = join(scratch, 'bl');
		cpSync(join(fixtures, 'backlog-md'), project, { recursive: true });
		const tasks = join(project, 'backlog', 'tasks');
		const victim = readdirSync(tasks).find(n => n.startsWith('task-3 '));
		assert.ok(victim !== undefined);
		writeFileSync(
			join(tasks, victim),
			readFileSync(join(tasks, victim), 'utf8').replace('title: Login form', 'title: [Login form'),
		);
		checks.push(
			refused(['import', '--from', 'backlog-md', project], /task-3 - Login-form\.md: the YAML does not parse/),
		);

		const tm = JSON.parse(readFileSync(join(fixtures, 'taskmaster', 'tasks.json'), 'utf8')) as {
			master: { tasks: { id: number; status: string }[] };
		};
		const last = tm.master.tasks[tm.master.tasks.length - 1];
		assert.ok(last !== undefined);
		last.status = 'someday';
		checks.push(
			refused(
				['import', '--from', 'taskmaster', file('tasks.json', JSON.stringify(tm))],
				/task 6 has status "someday"/,
			),
		);
		const count = (await cards()).length;
		await Promise.all(checks);
		assert.equal((await cards()).length, count, 'nothing of a refused import is applied');
		const usage = await baton(['import', '--from', 'jira', huge]);
		assert.equal(usage.code, 2);
		assert.match(usage.stderr, /known sources are beads, backlog-md, taskmaster/);
	});

	it('applies a data/import with onConflict fail entirely or not at all', async () => {
		{
			const existing = await show('bd-a1');
			const fresh = { ...existing, id: 'NEW-1', idempotencyKey: null };
			const before = (await cards()).length;
			await assert.rejects(hub.request('data/import', { cards: [fresh, existing], onConflict: 'fail' }), (e: Error) => {
				assert.match(e.message, /1 of the imported cards exist already \(bd-a1\).*nothing was imported/);
				return true;
			});
			assert.equal((await cards()).length, before, 'the fresh card of the refused call is not there');
			// The default still merges: the existing card is skipped, the new one lands.
			assert.deepEqual(await hub.request('data/import', { cards: [fresh, existing] }), { imported: 1, skipped: 1 });
		}
	});
});
