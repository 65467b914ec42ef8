/**
 * Epics, labels and links through the faces: the CLI in process (runCliHere: `baton create --parent --labels`, `list
 * --label`, `list --tree`, `list --parent`, `show`'s roll-up, `complete` refused on a parent with open
 * children and forced, `link --related`, bad labels; each refusal — a missing parent, one in another
 * project, a card as its own parent, a cycle through parents or through parents and dependencies,
 * too many or too long labels, a bad id prefix — leaves the backlog as it was; the child-waits claim
 * reason; `settings --id-prefix` printing the prefix as stored) and `baton mcp` driven by the real SDK
 * client (create with labels and parent, claim {labels} and the complete {next} that keeps them, the
 * refusal of an epic claimed by id, discoveredFrom set by a create while the agent holds a card, the
 * roll-up in show, an autoClose epic done with its last child), against one real hub.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { type Agent, cleanupDataDir, ensureBuilt, runCliHere, startAgent, tempDataDir, textOf } from '../helpers/mcp';

let dataDir: string;
const agents: Agent[] = [];

interface CardView {
	id: string;
	status?: string;
	parent?: string | null;
	labels?: string[];
	discoveredFrom?: string | null;
	related?: string[];
}

/** The CLI in process (runCliHere): its words and exit codes; the bundle end to end is cliRun.test.ts's. */
async function cli(
	args: string[],
	env?: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
	return runCliHere(args, { dataDir, ...(env === undefined ? {} : { env }) });
}

async function cliJson<T>(args: string[]): Promise<T> {
	const r = await cli([...args, '--json']);
	assert.equal(r.code, 0, r.stderr);
	return JSON.parse(r.stdout) as T;
}

/** Every card's id, of every project: what a refusal must leave as it was. */
async function allIds(): Promise<string[]> {
	return (await cliJson<{ cards: CardView[] }>(['list', '--all', '--project', '*'])).cards.map(c => c.id).sort();
}

async function cardOf(id: string): Promise<CardView> {
	return (await cliJson<{ card: CardView }>(['show', id])).card;
}

/** A refusal: exit 1 and the words on stderr. */
function refused(r: { code: number | null; stdout: string; stderr: string }, words: RegExp): void {
	assert.equal(r.code, 1, `refused, not: ${r.stdout}`);
	assert.match(r.stderr, words);
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
});

after(async () => {
	await Promise.all(agents.map(a => a.close().catch(() => undefined)));
	await cleanupDataDir(dataDir);
});

describe('epics, labels and links in the CLI', () => {
	it('creates an epic with children and labels, lists them by label and as a tree, rolls them up', async () => {
		assert.equal((await cli(['create', 'Web epic', '--id', 'WEB-1', '--phase', 'cli'])).code, 0);
		for (const [id, labels] of [
			['WEB-2', 'ui,api'],
			['WEB-3', 'ui'],
		] as const) {
			const r = await cli([
				'create',
				`child ${id}`,
				'--id',
				id,
				'--parent',
				'WEB-1',
				'--labels',
				labels,
				'--phase',
				'cli',
			]);
			assert.equal(r.code, 0, r.stderr);
		}
		const byLabel = await cli(['list', '--label', 'api', '--json']);
		assert.deepEqual(
			(JSON.parse(byLabel.stdout) as { cards: CardView[] }).cards.map(c => c.id),
			['WEB-2'],
		);
		const tree = await cli(['list', '--tree', '--phase', 'cli']);
		assert.match(tree.stdout, /WEB-1[^\n]*Web epic\n[^\n]*WEB-2[^\n]*└ child WEB-2\n[^\n]*WEB-3[^\n]*└ child WEB-3/);
		const show = await cli(['show', 'WEB-1']);
		assert.match(show.stdout, /Children: 0 \/ 2 done \(2 ready\)/);
		const shown = await cli(['show', 'WEB-2']);
		assert.match(shown.stdout, /parent +WEB-1/);
		assert.match(shown.stdout, /labels +api, ui/);
	});

	it('refuses closing a parent with open children unless forced, a bad label, and links related cards', async () => {
		const refused = await cli(['complete', 'WEB-1']);
		assert.equal(refused.code, 1);
		assert.match(refused.stderr + refused.stdout, /WEB-1 has 2 open children \(WEB-2, WEB-3\)/);
		const bad = await cli(['edit', 'WEB-2', '--labels', 'has space']);
		assert.notEqual(bad.code, 0);
		assert.match(bad.stderr + bad.stdout, /labels use letters, digits and - _ : \//);
		const linked = await cli(['link', 'WEB-2', '--related', 'WEB-3']);
		assert.equal(linked.code, 0, linked.stderr);
		assert.match(linked.stdout, /related: WEB-3/);
		const claim = await cli(['claim', 'WEB-1', '--agent', 'cli-agent']);
		assert.equal(claim.code, 1);
		assert.match(claim.stderr + claim.stdout, /WEB-1 has 2 open children/);
	});
});

describe('epics refused in the CLI, nothing changed', () => {
	// R-1 ⊃ R-3 ⊃ R-4 and R-1 ⊃ R-5; R-2 a free card; P-1 of another project.
	before(async () => {
		for (const args of [
			['Refusals epic', '--id', 'R-1'],
			['Free card', '--id', 'R-2'],
			['Child', '--id', 'R-3', '--parent', 'R-1'],
			['Grandchild', '--id', 'R-4', '--parent', 'R-3'],
			['Leaf', '--id', 'R-5', '--parent', 'R-1'],
			['Elsewhere', '--id', 'P-1', '--project', 'github.com/acme/other'],
		]) {
			const r = await cli(['create', ...args]);
			assert.equal(r.code, 0, r.stderr);
		}
	});

	it('refuses a missing parent, one of another project, and too many or too long labels, creating nothing', async () => {
		const before = await allIds();
		refused(
			await cli(['create', 'Orphan', '--id', 'R-9', '--parent', 'NOPE-1']),
			/Card R-9: its parent NOPE-1 does not exist\. Create the parent first or in the same call\./,
		);
		refused(
			await cli(['create', 'Cross', '--id', 'R-8', '--project', 'github.com/acme/web', '--parent', 'P-1']),
			/Card R-8 \(project github\.com\/acme\/web\) cannot be a child of P-1, which is in project github\.com\/acme\/other\./,
		);
		const seventeen = Array.from({ length: 17 }, (_, i) => `l${i + 1}`).join(',');
		refused(await cli(['create', 'Many', '--id', 'R-7', '--labels', seventeen]), /--labels: .*<=16 items/);
		refused(
			await cli(['create', 'Long', '--id', 'R-6', '--labels', 'x'.repeat(33)]),
			/--labels "x{33}": .*<=32 characters/,
		);
		assert.deepEqual(await allIds(), before, 'no card was created');
	});

	it('refuses a card as its own parent and a cycle through parents, changing no card', async () => {
		const [free, epic] = [await cardOf('R-2'), await cardOf('R-1')];
		refused(await cli(['edit', 'R-2', '--parent', 'R-2']), /Card R-2 cannot be its own parent\./);
		refused(
			await cli(['edit', 'R-1', '--parent', 'R-4']),
			/That would close a cycle through parents: R-1 → R-3 → R-4 → R-1\./,
		);
		assert.deepEqual([await cardOf('R-2'), await cardOf('R-1')], [free, epic]);
	});

	it('refuses a cycle through parents and dependencies naming it, and says why a held child waits', async () => {
		assert.equal((await cli(['link', 'R-1', 'R-2'])).code, 0, 'the epic waits on R-2');
		const free = await cardOf('R-2');
		// R-4 waits on its ancestor R-1's dependency R-2: R-2 waiting on R-4 closes the cycle.
		refused(
			await cli(['link', 'R-2', 'R-4']),
			/That would close a cycle through parents and dependencies: R-2 → R-4 → R-2\. A card waits on its children and its parent's dependencies/,
		);
		assert.deepEqual(await cardOf('R-2'), free, 'R-2 gained no dependency');
		const leaf = await cardOf('R-5');
		refused(
			await cli(['claim', 'R-5', '--agent', 'cli-epics']),
			/Card R-5 waits: its parent R-1 waits on R-2\. Claim one of those, or claim without a card id\./,
		);
		refused(
			await cli(['claim', 'R-4', '--agent', 'cli-epics']),
			/Card R-4 waits: its ancestor R-1 waits on R-2 \(R-4 → R-3 → R-1\)/,
		);
		assert.deepEqual(await cardOf('R-5'), leaf, 'the refused claim took nothing');
	});

	it("lists an epic's direct children with list --parent", async () => {
		const children = await cliJson<{ cards: CardView[] }>(['list', '--parent', 'R-1']);
		assert.deepEqual(children.cards.map(c => c.id).sort(), ['R-3', 'R-5']);
	});

	it('completes a parent with open children when forced, saying which it leaves open', async () => {
		const forced = await cli(['complete', 'R-3', '--force']);
		assert.equal(forced.code, 0, forced.stderr);
		assert.match(forced.stdout, /Completed R-3\. Its open children stay open: R-4\./);
		assert.equal((await cardOf('R-3')).status, 'done');
		assert.equal((await cardOf('R-4')).status, 'ready', 'the child stays open');
	});

	it('refuses --id-prefix A1 changing nothing, and prints a project prefix as stored (upper case)', async () => {
		const settings = await cliJson<Record<string, unknown>>(['settings']);
		refused(await cli(['settings', '--id-prefix', 'A1']), /--id-prefix: an id prefix is 1-10 letters/);
		assert.deepEqual(await cliJson<Record<string, unknown>>(['settings']), settings);
		const project = 'github.com/acme/fe';
		const set = await cli(['settings', '--id-prefix', 'fe'], { BATON_PROJECT: project });
		assert.equal(set.code, 0, set.stderr);
		assert.match(set.stdout, /id prefix +CARD- for new cards without a project; FE- for github\.com\/acme\/fe/);
		assert.doesNotMatch(set.stdout, /fe-/);
		const made = await cliJson<{ cards: CardView[] }>(['create', 'First fe card', '--project', project]);
		assert.deepEqual(
			made.cards.map(c => c.id),
			['FE-1'],
		);
	});
});

describe('epics, labels and links through baton mcp', () => {
	it('creates with labels and parent, claims by label, and records discoveredFrom', async () => {
		const a = await startAgent(dataDir, { env: { BATON_AGENT: 'mcp-epics' } });
		agents.push(a);
		const made = await a.json<{ cards: CardView[] }>('create', {
			cards: [
				{ id: 'API-1', title: 'api epic', phase: 'mcp' },
				{ id: 'API-2', title: 'docs child', phase: 'mcp', parent: 'API-1', labels: ['docs'] },
				{ id: 'API-3', title: 'ui child', phase: 'mcp', parent: 'API-1', labels: ['ui'], priority: 5 },
			],
		});
		assert.deepEqual(
			made.cards.map(c => [c.id, c.parent ?? null]),
			[
				['API-1', null],
				['API-2', 'API-1'],
				['API-3', 'API-1'],
			],
		);
		const epic = await a.call('claim', { cardId: 'API-1' });
		assert.equal(epic.isError, true);
		assert.match(textOf(epic), /API-1 has 2 open children \(API-2, API-3\)/);
		const claimed = await a.json<{ card: CardView | null }>('claim', { phase: 'mcp', labels: ['docs'] });
		assert.equal(claimed.card?.id, 'API-2');
		const found = await a.json<{ cards: CardView[] }>('create', { title: 'found while on API-2' });
		const [card] = found.cards;
		assert.ok(card !== undefined);
		assert.deepEqual([card.discoveredFrom, card.parent], ['API-2', 'API-1']);
		const shown = await a.json<{ children?: { total: number; done: number } }>('show', { cardId: 'API-1' });
		assert.equal(shown.children?.total, 3);
		const related = await a.json<{ card: CardView }>('link', { cardId: 'API-3', related: ['API-2'] });
		assert.deepEqual(related.card.related, ['API-2']);
		// complete {next} claims as the session's last claim did: by its labels, so not the ui child.
		const handed = await a.json<{ next?: { card: CardView | null; reason?: string } }>('complete', {
			cardId: 'API-2',
			next: true,
			phase: 'mcp',
		});
		assert.equal(handed.next?.card ?? null, null);
		assert.match(handed.next?.reason ?? '', /label docs/);
	});

	it('closes an autoClose epic when its last child completes', async () => {
		const a = await startAgent(dataDir, { env: { BATON_AGENT: 'mcp-autoclose' } });
		agents.push(a);
		await a.json('create', {
			cards: [
				{ id: 'AC-1', title: 'closes itself', phase: 'ac', autoClose: true },
				{ id: 'AC-2', title: 'its only child', phase: 'ac', parent: 'AC-1' },
			],
		});
		const claimed = await a.json<{ card: CardView | null }>('claim', { cardId: 'AC-2' });
		assert.equal(claimed.card?.id, 'AC-2');
		await a.json('complete', { cardId: 'AC-2', result: 'done' });
		const epic = await a.json<{ card: CardView }>('show', { cardId: 'AC-1' });
		assert.equal(epic.card.status, 'done', 'the epic completed with its last child');
	});
});
