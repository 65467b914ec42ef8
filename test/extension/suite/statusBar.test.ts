/** The status bar follows other agents' health: it turns to error when one goes stale. */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { after, describe, it } from './harness';
import { agentClient, api, uniqueId, waitFor } from './helpers';

describe('status bar', () => {
	const config = () => vscode.workspace.getConfiguration('baton');

	after(async () => {
		// Back to the hub's thresholds for the cases that follow.
		await config().update('health.healthySeconds', undefined, vscode.ConfigurationTarget.Workspace);
		await config().update('health.lateSeconds', undefined, vscode.ConfigurationTarget.Workspace);
	});

	it('counts a working agent, then shows it stale in error colour once it stops', async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		// Generous thresholds first, so the new agent starts out healthy.
		await config().update('health.healthySeconds', 60, vscode.ConfigurationTarget.Workspace);
		await config().update('health.lateSeconds', 120, vscode.ConfigurationTarget.Workspace);
		const id = uniqueId('worker');
		const worker = await agentClient(id);
		const card = uniqueId('stale');
		await worker.request('card/create', { cards: [{ id: card, title: 'Work of an agent that will stop' }] });
		await worker.request('card/claim', { cardId: card, ttlSeconds: 600 });
		const before = await waitFor('the worker in the status bar tooltip', () => {
			const s = baton.statusBar.summary;
			return s.tooltip.includes(id) && s.tooltip.includes(card) ? s : undefined;
		});
		assert.match(before.text, /\d+ agents?/);
		const line = before.tooltip.split('\n').find(l => l.includes(id));
		assert.match(line ?? '', /healthy/);

		// The worker goes silent (no more pings); with short thresholds it turns late, then stale.
		worker.close();
		await config().update('health.healthySeconds', 1, vscode.ConfigurationTarget.Workspace);
		await config().update('health.lateSeconds', 2, vscode.ConfigurationTarget.Workspace);
		const t0 = Date.now();
		const after = await waitFor('the status bar to report a stale agent', () => {
			const s = baton.statusBar.summary;
			return s.text.includes('stale') ? s : undefined;
		});
		console.log(`status bar went from "${before.text}" to "${after.text}" in ${Date.now() - t0} ms`);
		assert.notEqual(after.text, before.text);
		assert.equal(after.level, 'error');
		assert.match(after.tooltip.split('\n').find(l => l.includes(id)) ?? '', /stale/);
	});
});
