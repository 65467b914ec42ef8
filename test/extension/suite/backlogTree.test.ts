/** The Backlog tree shows what agents do, live: a card created and claimed through the real MCP client. */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { CardNode, GroupKey } from '../../../extension/backlogNodes';
import { after, before, describe, it } from './harness';
import { makeCard } from '../../helpers/cards';
import { agentClient, api, callTool, mcpAgent, uniqueId, waitFor } from './helpers';

type Mcp = Awaited<ReturnType<typeof mcpAgent>>;

async function rowsIn(group: GroupKey): Promise<{ node: CardNode; item: vscode.TreeItem }[]> {
	const { backlog } = await api();
	const groupNode = backlog.getChildren().find(g => g.kind === 'group' && g.key === group);
	if (!groupNode) {
		return [];
	}
	return backlog
		.getChildren(groupNode)
		.filter((n): n is CardNode => n.kind === 'card')
		.map(node => ({ node, item: backlog.getTreeItem(node) }));
}

describe('Backlog tree', () => {
	let agent: Mcp | undefined;
	const agentId = uniqueId('mcp-agent');

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		agent = await mcpAgent(agentId);
	});

	after(async () => {
		await agent?.close();
	});

	it('shows a card an agent created and claimed through the MCP client, with owner and lease', async () => {
		assert.ok(agent);
		const id = uniqueId('mcp');
		const title = `Wire the login form ${id}`;
		const t0 = Date.now();
		await callTool(agent, 'create', { id, title, priority: 7, phase: 'auth', body: 'Use the **existing** form.' });
		const ready = await waitFor('the created card under Ready', async () =>
			(await rowsIn('ready')).find(r => r.node.card.id === id),
		);
		console.log(`created card appeared in the tree ${Date.now() - t0} ms after the MCP call began`);
		assert.equal(ready.item.label, title);
		assert.equal(ready.item.contextValue, 'card.ready');

		const t1 = Date.now();
		const claim = await callTool<{ card: { id: string } | null }>(agent, 'claim', { cardId: id, ttlSeconds: 120 });
		assert.equal(claim.card?.id, id);
		const row = await waitFor('the claimed card under In progress', async () =>
			(await rowsIn('claimed')).find(r => r.node.card.id === id),
		);
		console.log(`claim appeared in the tree ${Date.now() - t1} ms after the MCP call began`);
		assert.equal(row.item.contextValue, 'card.claimed.other');
		assert.match(String(row.item.description), new RegExp(agentId));
		assert.match(String(row.item.description), /lease \d+m/);
		assert.ok(!(await rowsIn('ready')).some(r => r.node.card.id === id), 'it left Ready');
	});

	it('shows the agent in the Agents tree with its current card', async () => {
		const { agents } = await api();
		const node = await waitFor('the MCP agent in the Agents tree', () =>
			agents.getChildren().find(n => n.view.agent.id === agentId),
		);
		const item = agents.getTreeItem(node);
		assert.match(String(item.description), /mcp-[a-z0-9]+-\d+/, 'shows the card it holds');
		assert.match(String(item.contextValue), /^agent\.busy\./);
	});

	it('filters by phase and text without losing the groups', async () => {
		const { backlog } = await api();
		await vscode.commands.executeCommand('baton.filterBacklog', { phase: 'auth' });
		const claimed = await rowsIn('claimed');
		assert.ok(claimed.length > 0 && claimed.every(r => r.node.card.phase === 'auth'));
		await vscode.commands.executeCommand('baton.filterBacklog', { text: 'no card has this text' });
		assert.equal((await rowsIn('claimed')).length, 0);
		await vscode.commands.executeCommand('baton.clearFilter');
		assert.deepEqual(backlog.filter, {});
		assert.ok((await rowsIn('claimed')).length > 0);
	});

	it('drops the agent’s claim when its MCP session closes', async () => {
		assert.ok(agent);
		const held = (await rowsIn('claimed')).filter(r => r.node.card.claimOwner === agentId).map(r => r.node.card.id);
		assert.ok(held.length > 0);
		await agent.close();
		agent = undefined;
		await waitFor('the released card back under Ready', async () => {
			const ready = await rowsIn('ready');
			return held.every(id => ready.some(r => r.node.card.id === id));
		});
	});
});

// core/rules/health.ts decides "stalled" for both trees and the board: a quiet card of a live agent is
// stalled; once the agent is dead, the card is held by a dead agent, not stalled.
describe('stalled in the trees', () => {
	const config = () => vscode.workspace.getConfiguration('baton');
	const keys = ['healthySeconds', 'lateSeconds', 'staleSeconds', 'stallSeconds'] as const;
	const setHealth = async (values: Partial<Record<(typeof keys)[number], number>>) => {
		for (const k of keys) {
			await config().update(`health.${k}`, values[k], vscode.ConfigurationTarget.Workspace);
		}
	};

	after(async () => {
		// Back to the hub's thresholds and the fleet notifications for the cases that follow.
		await setHealth({});
		await config().update('notifications.fleet', undefined, vscode.ConfigurationTarget.Workspace);
	});

	it('flags a live agent’s quiet card stalled, and not once that agent is dead', async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		// The worker will die holding a card: no "agent died" toast over the UI cases that follow.
		await config().update('notifications.fleet', false, vscode.ConfigurationTarget.Workspace);
		await setHealth({ healthySeconds: 60, lateSeconds: 120, staleSeconds: 300, stallSeconds: 1 });
		const workerId = uniqueId('quiet-worker');
		const worker = await agentClient(workerId);
		const id = uniqueId('quiet');
		await worker.request('card/create', { cards: [{ id, title: 'Claimed, then no progress' }] });
		await worker.request('card/claim', { cardId: id, ttlSeconds: 600 });
		const row = async () => (await rowsIn('claimed')).find(r => r.node.card.id === id);
		const view = () => baton.agents.getChildren().find(n => n.view.agent.id === workerId)?.view;
		await waitFor('the quiet card marked stalled', async () =>
			String((await row())?.item.description).includes('stalled'),
		);
		assert.equal(view()?.stalled, true, 'the Agents tree calls the live agent stalled too');

		worker.close();
		await setHealth({ healthySeconds: 1, lateSeconds: 2, staleSeconds: 3, stallSeconds: 1 });
		await waitFor('the worker dead in the Agents tree', () => view()?.health === 'dead');
		const dead = await row();
		assert.ok(dead, 'the card is still held (a test client’s claims outlive its connection)');
		assert.doesNotMatch(String(dead.item.description), /stalled/);
		assert.equal(view()?.stalled, false);

		await vscode.commands.executeCommand('baton.reclaimCard', id, { confirm: false });
		await waitFor('the reclaimed card back under Ready', async () =>
			(await rowsIn('ready')).some(r => r.node.card.id === id),
		);
	});
});

// The connection holds every live card but Done only by pages, newest first.
describe('Done by pages in the Backlog tree', () => {
	it('lists Done newest first, more per Load more…, each card once, and counts every done card', async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		const importer = await agentClient(uniqueId('importer'));
		const prefix = uniqueId('old');
		const base = Date.parse('2001-01-01T00:00:00.000Z');
		try {
			// Older than any other done card: they sit on the last pages of Done.
			await importer.request('data/import', {
				cards: Array.from({ length: 150 }, (_, i) =>
					makeCard({
						id: `${prefix}-${String(i).padStart(3, '0')}`,
						status: 'done',
						createdAt: new Date(base).toISOString(),
						updatedAt: new Date(base + i * 1000).toISOString(),
					}),
				),
			});
			// A fresh snapshot: Done's first page (doneLimit, 20) and the counts from card/stats.
			baton.hub.restart();
			await waitFor('the hub connection again', () => baton.hub.state === 'connected', 60_000);
			const doneGroup = baton.backlog.getChildren().find(g => g.kind === 'group' && g.key === 'done');
			assert.ok(doneGroup);
			const children = () => baton.backlog.getChildren(doneGroup);
			const more = () => children().find(n => n.kind === 'more');
			assert.ok(more(), 'Load more… under Done');
			assert.ok(children().length <= 21, 'only the first page is loaded');
			const stats = await importer.request('card/stats', {});
			// Every done card counted, not the loaded ones (a project filter shows the loaded matches and "+").
			const unfiltered = baton.backlog.describeFilter() === '';
			const count = String(baton.backlog.getTreeItem(doneGroup).description);
			assert.ok(unfiltered ? count === String(stats.counts.done) : /^\d+\+$/.test(count), count);
			const moreItem = baton.backlog.getTreeItem(more()!);
			assert.equal(moreItem.command?.command, 'baton.loadMoreDone');
			for (let i = 0; more() !== undefined && i < 200; i++) {
				await vscode.commands.executeCommand('baton.loadMoreDone');
			}
			assert.equal(more(), undefined, 'no Load more… once every done card is listed');
			const ids = children()
				.filter((n): n is CardNode => n.kind === 'card')
				.map(n => n.card.id);
			assert.equal(new Set(ids).size, ids.length, 'no card twice');
			if (unfiltered) {
				assert.equal(ids.length, stats.counts.done);
			}
			const mine = ids.filter(id => id.startsWith(`${prefix}-`));
			assert.deepEqual(
				mine,
				Array.from({ length: 150 }, (_, i) => `${prefix}-${String(149 - i).padStart(3, '0')}`),
			);
			assert.deepEqual(ids.slice(-150), mine, 'the oldest last');
		} finally {
			importer.close();
		}
	});
});
