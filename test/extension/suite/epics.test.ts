/**
 * Epics and labels in the Backlog tree, inside a real VS Code against the real hub: children nest under their
 * epic in the same status group (collapsible), a child elsewhere names its epic, the epic's
 * description says "N / M done" and follows a child completing, the tooltip shows the labels and
 * the links that do not block, and the label filter (baton.filterBacklog {label}) keeps only the cards
 * that carry it until the filter is cleared.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { BacklogNode, CardNode, GroupKey } from '../../../extension/backlogNodes';
import type { RpcClient } from '../../../core/protocol/rpc';
import { after, before, describe, it } from './harness';
import { agentClient, api, uniqueId, waitFor } from './helpers';

async function row(group: GroupKey, id: string, under?: BacklogNode): Promise<CardNode | undefined> {
	const { backlog } = await api();
	const parent = under ?? backlog.getChildren().find(g => g.kind === 'group' && g.key === group);
	return backlog
		.getChildren(parent)
		.filter((n): n is CardNode => n.kind === 'card')
		.find(n => n.card.id === id);
}

/** Every card row of the tree, nested ones included. */
async function allRows(): Promise<CardNode[]> {
	const { backlog } = await api();
	const rows: CardNode[] = [];
	const walk = (nodes: BacklogNode[]): void => {
		for (const n of nodes) {
			if (n.kind === 'card') {
				rows.push(n);
			}
			if (n.kind === 'card' || n.kind === 'group') {
				walk(backlog.getChildren(n));
			}
		}
	};
	walk(backlog.getChildren());
	return rows;
}

describe('Backlog tree: epics', () => {
	let planner: RpcClient;
	const epic = uniqueId('EPIC');
	const [a, b, c] = [uniqueId('kid'), uniqueId('kid'), uniqueId('kid')];
	const other = uniqueId('misc');

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		planner = await agentClient(uniqueId('planner'));
		await planner.request('card/create', {
			cards: [
				{ id: epic, title: 'Checkout epic', priority: 3 },
				{ id: a, title: 'Cart page', parent: epic, labels: ['ui'] },
				{ id: b, title: 'Orders API', parent: epic, labels: ['api', 'backend'] },
				{ id: c, title: 'Receipt email', parent: epic },
				{ id: other, title: 'Docs' },
			],
		});
		await planner.request('card/link', { cardId: b, related: [other] });
		await planner.request('card/complete', { cardId: a, force: true });
	});

	after(() => {
		planner.close();
	});

	it('nests the children under their epic, which shows its progress and follows a child completing', async () => {
		const { backlog } = await api();
		const node = await waitFor('the epic with its progress', async () => {
			const n = await row('ready', epic);
			return n !== undefined && String(backlog.getTreeItem(n).description).includes('1 / 3 done') ? n : undefined;
		});
		const item = backlog.getTreeItem(node);
		assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
		const nested = backlog.getChildren(node).map(n => (n.kind === 'card' ? n.card.id : n.kind));
		assert.deepEqual(nested.sort(), [b, c].sort(), 'the ready children nest under it');
		assert.equal(await row('ready', b), undefined, 'a nested child is no top row of Ready');
		const child = await row('ready', b, node);
		assert.ok(child);
		assert.deepEqual(backlog.getParent(child), node, 'reveal finds a child through its epic');
		assert.equal(backlog.getTreeItem(child).collapsibleState, vscode.TreeItemCollapsibleState.None);
		const doneChild = await waitFor('the done child in Done', () => row('done', a));
		assert.match(String(backlog.getTreeItem(doneChild).description), new RegExp(`in ${epic}`));

		await planner.request('card/complete', { cardId: c, force: true });
		await waitFor('the epic at 2 / 3 done', async () => {
			const n = await row('ready', epic);
			return n !== undefined && String(backlog.getTreeItem(n).description).includes('2 / 3 done');
		});
		const still = await row('ready', epic);
		assert.ok(still);
		assert.deepEqual(
			backlog.getChildren(still).map(n => (n.kind === 'card' ? n.card.id : n.kind)),
			[b],
		);
	});

	it('shows labels, the epic and related cards in the tooltip', async () => {
		const { backlog } = await api();
		const epicNode = await row('ready', epic);
		assert.ok(epicNode);
		const child = await row('ready', b, epicNode);
		assert.ok(child);
		const item = await backlog.resolveTreeItem(backlog.getTreeItem(child), child);
		const tip = (item.tooltip as vscode.MarkdownString).value;
		assert.match(tip, /\*\*Labels:\*\* api, backend/);
		// No attempt of it reported usage: the tooltip says so rather than showing a number.
		assert.match(tip, /cost unknown/);
		assert.match(tip, new RegExp(`\\*\\*Part of\\*\\* ${epic.replace(/-/g, '\\\\-')} Checkout epic`));
		assert.match(tip, new RegExp(`\\*\\*Related:\\*\\* ${other.replace(/-/g, '\\\\-')}`));
		const epicTip = (
			(await backlog.resolveTreeItem(backlog.getTreeItem(epicNode), epicNode)).tooltip as vscode.MarkdownString
		).value;
		assert.match(epicTip, /\*\*Epic:\*\* 2 \/ 3 done/);
	});

	it('filters by label: only the cards that carry it remain, shown in the description, until cleared', async () => {
		const { backlog } = await api();
		const filter = await vscode.commands.executeCommand('baton.filterBacklog', { label: 'backend' });
		assert.deepEqual(filter, { label: 'backend' });
		assert.deepEqual(backlog.filter, { label: 'backend' });
		assert.match(backlog.describeFilter(), /label: backend/);
		const shown = await allRows();
		assert.ok(
			shown.some(n => n.card.id === b),
			'the labelled child is shown',
		);
		for (const n of shown) {
			assert.ok(n.card.labels?.includes('backend'), `${n.card.id} carries the label`);
		}
		assert.ok(await row('ready', b), 'with its epic filtered out the child is a top row of Ready');
		assert.equal(await row('ready', epic), undefined);
		assert.equal(await row('ready', other), undefined);
		assert.equal(await row('done', a), undefined, 'a done card with another label is hidden too');

		await vscode.commands.executeCommand('baton.filterBacklog', { label: 'ui' });
		assert.ok(await row('done', a), 'Done shows the ui card');
		assert.equal(await row('ready', b), undefined);

		await vscode.commands.executeCommand('baton.clearFilter');
		assert.deepEqual(backlog.filter, {});
		assert.doesNotMatch(backlog.describeFilter(), /label/);
		assert.ok(await row('ready', epic), 'the epic is back');
		assert.ok(await row('ready', other));
		assert.ok(await row('done', a));
	});
});
