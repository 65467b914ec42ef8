/**
 * Issue 31 through the faces: the CLI in process (runCliHere: `baton create --parent --labels`, `list
 * --label`, `list --tree`, `show`'s roll-up, `complete` refused on a parent with open children, `link
 * --related`, bad labels) and `baton mcp` driven by the real SDK client (create with labels and parent, claim {labels} and the
 * complete {next} that keeps them, the refusal of an epic claimed by id, discoveredFrom set by a
 * create while the agent holds a card, the roll-up in show), against one real hub.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { type Agent, cleanupDataDir, ensureBuilt, runCliHere, startAgent, tempDataDir, textOf } from '../helpers/mcp';

let dataDir: string;
const agents: Agent[] = [];

interface CardView {
	id: string;
	parent?: string | null;
	labels?: string[];
	discoveredFrom?: string | null;
	related?: string[];
}

/** The CLI in process (runCliHere): its words and exit codes; the bundle end to end is cliRun.test.ts's. */
async function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
	return runCliHere(args, { dataDir });
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
});
