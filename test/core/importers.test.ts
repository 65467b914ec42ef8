/**
 * The foreign-backlog importers as pure functions (core/formats/importers/): each source's statuses,
 * priorities, dependencies, sub-tasks and acceptance criteria mapped as docs/guide.md says, ids kept
 * or mapped around the store's, re-imports recognised, and every malformed source refused with the
 * line or file named. The CLI and hub path is test/mcp-server/importForeign.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { BatonError } from '../../core/errors';
import { backlogMdPriority, backlogMdStatus, parseBacklogMd } from '../../core/formats/importers/backlogMd';
import { beadsPriority, parseBeads } from '../../core/formats/importers/beads';
import { type ExistingCard, type ForeignBacklog, planImport, sourceKey } from '../../core/formats/importers/plan';
import { parseTaskmaster, taskmasterPriority } from '../../core/formats/importers/taskmaster';

const fixtures = join(__dirname, '..', 'fixtures', 'import');
const now = new Date('2026-01-02T03:04:05Z');
const options = { project: 'github.com/acme/shop', review: 'none' as const, now };

const beadsText = readFileSync(join(fixtures, 'beads', 'issues.jsonl'), 'utf8');
const taskmasterText = readFileSync(join(fixtures, 'taskmaster', 'tasks.json'), 'utf8');
function backlogMdFiles(): Parameters<typeof parseBacklogMd>[0] {
	const root = join(fixtures, 'backlog-md', 'backlog');
	return {
		config: { file: 'config.yml', text: readFileSync(join(root, 'config.yml'), 'utf8') },
		tasks: readdirSync(join(root, 'tasks'))
			.sort()
			.map(n => ({ file: n, text: readFileSync(join(root, 'tasks', n), 'utf8') })),
	};
}

/** Runs `f` and returns the BatonError it throws (failing the test when it throws none). */
function refusal(f: () => unknown): BatonError {
	try {
		f();
	} catch (e) {
		if (BatonError.is(e)) {
			return e;
		}
		throw e;
	}
	assert.fail('expected a refusal');
}

const item = (ref: string, more: Partial<ForeignBacklog['items'][number]> = {}): ForeignBacklog['items'][number] => ({
	ref,
	where: `line ${ref}`,
	title: `Task ${ref}`,
	body: '',
	status: 'ready',
	priority: 0,
	dependsOn: [],
	acceptance: [],
	labels: [],
	...more,
});

describe('priorities onto Baton’s scale (medium or default = 0, +1 per step more urgent)', () => {
	it('maps each source', () => {
		assert.deepEqual([0, 1, 2, 3, 4].map(beadsPriority), [2, 1, 0, -1, -2]);
		assert.deepEqual(['high', 'medium', 'low', undefined].map(backlogMdPriority), [1, 0, -1, 0]);
		assert.deepEqual(['critical', 'high', 'medium', 'low', undefined].map(taskmasterPriority), [2, 1, 0, -1, 0]);
		assert.equal(taskmasterPriority('urgent'), undefined);
	});
});

describe('beads', () => {
	it('maps statuses, blocking and parent-child dependencies, labels and acceptance criteria', () => {
		const b = parseBeads(beadsText, 'issues.jsonl');
		assert.deepEqual(
			b.items.map(i => [i.ref, i.status, i.priority, i.dependsOn, i.parent ?? null]),
			[
				['bd-a1', 'ready', 1, [], null],
				['bd-b2', 'done', 2, [], 'bd-a1'],
				['bd-c3', 'ready', 0, ['bd-b2'], 'bd-a1'],
				['bd-d4', 'blocked', -1, ['bd-c3'], null],
				['bd-e5', 'ready', -2, [], null],
			],
		);
		assert.deepEqual(b.skips, [{ ref: 'bd-f6', where: 'issues.jsonl line 6', reason: 'deleted in beads (tombstone)' }]);
		const totals = b.items[1];
		assert.deepEqual(totals?.acceptance, ['Totals match the invoice', 'Rounding is per line']);
		assert.deepEqual(totals.labels, ['checkout', 'backend']);
		assert.match(b.items[2]?.statusNote ?? '', /in progress/);
		// Links that do not block are links now, not text.
		const blocked = b.items[3];
		assert.ok(blocked !== undefined);
		assert.deepEqual(blocked.related, ['bd-e5']);
		assert.doesNotMatch(blocked.body, /Related to/);
		const receipt = b.items[4];
		assert.ok(receipt !== undefined);
		assert.equal(receipt.discoveredFrom, 'bd-c3');
		assert.deepEqual(receipt.duplicates, ['bd-d4']);
		assert.deepEqual(receipt.dependsOn, [], 'neither blocks');
	});

	it('plans links that do not block onto the cards, and a re-import of the file creates nothing', () => {
		const plan = planImport(parseBeads(beadsText, 'issues.jsonl'), [], options);
		const byId = new Map(plan.cards.map(c => [c.id, c]));
		assert.equal(byId.get('bd-e5')?.discoveredFrom, 'bd-c3');
		assert.deepEqual(byId.get('bd-e5')?.duplicates, ['bd-d4']);
		assert.deepEqual(byId.get('bd-d4')?.related, ['bd-e5']);
		assert.deepEqual(
			plan.skips.map(s => s.ref),
			['bd-f6'],
			'no link was dropped',
		);
		const existing = plan.cards.map(c => ({ id: c.id, idempotencyKey: c.idempotencyKey, dependsOn: c.dependsOn }));
		const again = planImport(parseBeads(beadsText, 'issues.jsonl'), existing, options);
		assert.deepEqual(again.cards, []);
		assert.deepEqual(
			again.already.map(m => m.id),
			plan.cards.map(c => c.id),
		);
	});

	it('names the line of a broken JSON line, an unknown status and a bad priority', () => {
		const broken = refusal(() => parseBeads('{"id":"a","title":"A","status":"open"}\n{"id": "b", ', 'x.jsonl'));
		assert.match(broken.message, /^x\.jsonl line 2: not a JSON object/);
		const status = refusal(() => parseBeads('{"id":"a","title":"A","status":"wip"}', 'x.jsonl'));
		assert.match(
			status.message,
			/x\.jsonl line 1: issue a has status "wip"; known are open, in_progress, blocked, closed/,
		);
		const priority = refusal(() => parseBeads('\n{"id":"a","title":"A","priority":9}', 'x.jsonl'));
		assert.match(priority.message, /x\.jsonl line 2: .*priorities are 0–4/);
	});
});

describe('Backlog.md', () => {
	it('reads front matter, sections, acceptance criteria and the configured statuses', () => {
		const b = parseBacklogMd(backlogMdFiles());
		assert.deepEqual(
			b.items.map(i => [i.ref, i.status, i.priority, i.dependsOn, i.parent ?? null]),
			[
				['TASK-1', 'done', 1, [], null],
				['TASK-2', 'ready', 0, ['TASK-1'], null],
				['TASK-3', 'ready', -1, ['TASK-2'], null],
				['TASK-4', 'ready', 0, [], null],
				['TASK-4.1', 'ready', 0, [], 'TASK-4'],
				['TASK-4.2', 'ready', 0, ['TASK-4.1'], 'TASK-4'],
			],
		);
		const login = b.items[1];
		assert.deepEqual(login?.acceptance, ['Valid credentials return a session', 'Invalid credentials return 401']);
		assert.deepEqual(login.labels, ['backend', 'auth']);
		assert.match(login.statusNote ?? '', /Was "In Progress"/);
		assert.match(login.body, /## Description\n\nPOST \/login/);
		assert.doesNotMatch(login.body, /SECTION:|AC:BEGIN|#1/);
	});

	it('links tasks whatever the case of their ids', () => {
		const task = (id: string, more = ''): { file: string; text: string } => ({
			file: `${id}.md`,
			text: `---\nid: ${id}\ntitle: T ${id}\nstatus: To Do\n${more}---\n`,
		});
		const b = parseBacklogMd({
			tasks: [task('TASK-1'), task('TASK-2', 'dependencies: [task-1]\nparent_task_id: task-1\n')],
		});
		assert.deepEqual(b.items[1]?.dependsOn, ['TASK-1']);
		assert.equal(b.items[1].parent, 'TASK-1');
	});

	it('maps custom statuses: the last is done, a "block" one is blocked, the rest ready', () => {
		const configured = ['Backlog', 'Doing', 'Blocked', 'Shipped'];
		assert.equal(backlogMdStatus('Shipped', configured).status, 'done');
		assert.equal(backlogMdStatus('Blocked', configured).status, 'blocked');
		assert.equal(backlogMdStatus('Doing', configured).status, 'ready');
		assert.equal(backlogMdStatus('Backlog', configured).statusNote, undefined);
	});

	it('names the file with broken front matter, a missing id or an unknown status', () => {
		const files = backlogMdFiles();
		const one = (text: string) => parseBacklogMd({ ...files, tasks: [{ file: 'task-9 - Bad.md', text }] });
		assert.match(
			refusal(() => one('---\nid: TASK-9\ntitle: [unclosed\n---\n')).message,
			/^task-9 - Bad\.md: the YAML does not parse/,
		);
		assert.match(refusal(() => one('no front matter')).message, /^task-9 - Bad\.md: no YAML front matter/);
		assert.match(
			refusal(() => one('---\ntitle: T\nstatus: To Do\n---\n')).message,
			/task-9 - Bad\.md: the front matter has no id/,
		);
		assert.match(
			refusal(() => one('---\nid: TASK-9\ntitle: T\nstatus: Someday\n---\n')).message,
			/task-9 - Bad\.md: status "Someday" is not one of the project's statuses \(To Do, In Progress, Done\)/,
		);
	});
});

describe('Taskmaster', () => {
	it('reads the tagged format with sub-tasks, and the legacy format', () => {
		const t = parseTaskmaster(taskmasterText, 'tasks.json');
		assert.deepEqual(
			t.items.map(i => [i.ref, i.status, i.priority, i.dependsOn, i.parent ?? null]),
			[
				['1', 'done', 1, [], null],
				['2', 'ready', 0, ['1'], null],
				['3', 'ready', -1, ['2'], null],
				['3.1', 'ready', 0, [], '3'],
				['3.2', 'ready', 0, ['3.1'], '3'],
				['4', 'blocked', -1, [], null],
				['5', 'review', 0, [], null],
				['6', 'done', 0, ['4'], null],
			],
		);
		assert.match(t.items[0]?.body ?? '', /## Details\nNode 20, TypeScript, ESLint\./);
		const legacy = parseTaskmaster(
			JSON.stringify({
				tasks: [
					{
						id: 1,
						title: 'A',
						subtasks: [
							{ id: 1, title: 'B', dependencies: [2] },
							{ id: 2, title: 'C' },
						],
					},
				],
			}),
			'tasks.json',
		);
		// A bare number in a sub-task's dependencies is its sibling.
		assert.deepEqual(
			legacy.items.map(i => [i.ref, i.dependsOn]),
			[
				['1', []],
				['1.1', ['1.2']],
				['1.2', []],
			],
		);
	});

	it('refuses broken JSON, an unknown status and a missing tag, naming the task', () => {
		assert.match(refusal(() => parseTaskmaster('{"master": ', 'tasks.json')).message, /^tasks\.json: not JSON/);
		const status = refusal(() =>
			parseTaskmaster(
				JSON.stringify({
					master: {
						tasks: [
							{ id: 1, title: 'A' },
							{ id: 2, title: 'B', status: 'wip' },
						],
					},
				}),
				'tasks.json',
			),
		);
		assert.match(status.message, /tasks\.json tag master task #2: task 2 has status "wip"/);
		assert.match(
			refusal(() => parseTaskmaster(taskmasterText, 'tasks.json', 'feature-x')).message,
			/no tag "feature-x"; the file has master/,
		);
	});
});

describe('planImport', () => {
	it('keeps fitting ids, maps taken ones deterministically and makes sub-tasks children of their task', () => {
		const existing: ExistingCard[] = [{ id: '3', idempotencyKey: null, dependsOn: [] }];
		const plan = planImport(parseTaskmaster(taskmasterText, 'tasks.json'), existing, options);
		assert.deepEqual(
			plan.mapped.filter(m => !m.kept),
			[{ ref: '3', id: '3-2', kept: false }],
		);
		const byId = new Map(plan.cards.map(c => [c.id, c]));
		// Sub-tasks are children, not dependencies of their parent.
		assert.deepEqual(byId.get('3-2')?.dependsOn, ['2']);
		assert.equal(byId.get('3.1')?.parent, '3-2');
		assert.deepEqual(byId.get('3.1')?.labels, []);
		assert.equal(byId.get('3-2')?.project, 'github.com/acme/shop');
		assert.equal(byId.get('5')?.review, 'human', 'a card in review gets a human reviewer when the backlog has none');
		assert.equal(byId.get('4')?.blockedReason, 'Deferred in Taskmaster when imported.');
		assert.equal(byId.get('1')?.idempotencyKey, sourceKey('taskmaster', 'github.com/acme/shop', '1'));
		assert.deepEqual(plan.counts, {
			cards: 8,
			dependencies: 4,
			byStatus: { ready: 4, claimed: 0, review: 1, blocked: 1, done: 2 },
		});
		assert.deepEqual(planImport(parseTaskmaster(taskmasterText, 'tasks.json'), existing, options).mapped, plan.mapped);
	});

	it('recognises what an earlier run imported and links new items to it', () => {
		const first = planImport({ source: 'beads', items: [item('a')], skips: [] }, [], options);
		const existing = first.cards.map(c => ({ id: c.id, idempotencyKey: c.idempotencyKey, dependsOn: c.dependsOn }));
		const again = planImport(
			{ source: 'beads', items: [item('a'), item('b', { dependsOn: ['a'] })], skips: [] },
			existing,
			options,
		);
		assert.deepEqual(again.already, [{ ref: 'a', id: 'a', kept: true }]);
		assert.deepEqual(
			again.cards.map(c => [c.id, c.dependsOn]),
			[['b', ['a']]],
		);
		// Another project's import of the same ids is not "imported before".
		const other = planImport({ source: 'beads', items: [item('a')], skips: [] }, existing, {
			...options,
			project: 'p2',
		});
		assert.deepEqual(other.mapped, [{ ref: 'a', id: 'a-2', kept: false }]);
	});

	it('maps ids that do not fit Baton’s rules and shortens long titles', () => {
		const plan = planImport(
			{ source: 'beads', items: [item('#12 x'), item('-a', { title: 'T'.repeat(300) })], skips: [] },
			[],
			options,
		);
		assert.deepEqual(
			plan.cards.map(c => c.id),
			['12-x', 'a'],
		);
		assert.equal(plan.cards[1]?.title.length, 200);
		assert.match(plan.cards[1].body, /Full title: T{300}/);
	});

	it('refuses a cycle (named in source ids), duplicate ids and too much text; drops and reports a dangling link', () => {
		const cycle = refusal(() =>
			planImport(
				{ source: 'beads', items: [item('x', { dependsOn: ['y'] }), item('y', { dependsOn: ['x'] })], skips: [] },
				[],
				options,
			),
		);
		assert.equal(cycle.code, 'cycle');
		assert.match(cycle.message, /x → y → x|y → x → y/);
		const twice = refusal(() =>
			planImport({ source: 'beads', items: [item('x'), { ...item('x'), where: 'line 9' }], skips: [] }, [], options),
		);
		assert.match(twice.message, /^line 9: id "x" appears twice \(first at line x\)/);
		const huge = refusal(() =>
			planImport({ source: 'beads', items: [item('x', { body: 'b'.repeat(70_000) })], skips: [] }, [], options),
		);
		assert.equal(huge.code, 'too_large');
		const dangling = planImport(
			{ source: 'beads', items: [item('x', { dependsOn: ['gone'] })], skips: [] },
			[],
			options,
		);
		assert.deepEqual(dangling.cards[0]?.dependsOn, []);
		assert.match(dangling.skips[0]?.reason ?? '', /dependency "gone" is not in the source/);
	});
});
