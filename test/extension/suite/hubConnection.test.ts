/**
 * The connection (issue item 1): the human's claims stay alive through agent/ping while the window is
 * open, the extension reconnects by itself after the hub is killed, and an unreachable hub shows in
 * the status bar in error colour with a message that says why.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Result } from '../../../core/protocol';
import type { HubState } from '../../../extension/hubConnection';
import { after, before, describe, it } from './harness';
import { agentClient, api, env, storeCard, uniqueId, waitFor } from './helpers';

const config = () => vscode.workspace.getConfiguration('baton');

function hubPid(dataDir: string): number {
	return (JSON.parse(readFileSync(join(dataDir, 'hub.json'), 'utf8')) as { pid: number }).pid;
}

describe('hub connection', () => {
	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
	});

	after(async () => {
		await config().update('claim.ttlSeconds', undefined, vscode.ConfigurationTarget.Workspace);
		await config().update('dataDir', env('BATON_TEST_DATA_DIR'), vscode.ConfigurationTarget.Workspace);
	});

	it('keeps the human’s claim alive past its TTL while the window is open', async () => {
		const baton = await api();
		await config().update('claim.ttlSeconds', 12, vscode.ConfigurationTarget.Workspace);
		await waitFor('the new TTL setting', () => baton.hub.settings.claimTtlSeconds === 12);
		const observer = await agentClient(uniqueId('observer'));
		try {
			const id = uniqueId('keepalive');
			await observer.request('card/create', { cards: [{ id, title: 'Held by the human' }] });
			await waitFor('the card in the cache', () => baton.hub.cards.has(id));
			const claim = await vscode.commands.executeCommand<Result<'card/claim'>>('baton.claimCard', id);
			const firstExpiry = Date.parse(claim.lease?.expiresAt ?? '');
			assert.ok(firstExpiry - Date.now() <= 12_000, 'the lease follows baton.claim.ttlSeconds');
			// Past the original TTL: only the extension's agent/ping (every 10 s) can have renewed it.
			await new Promise(r => setTimeout(r, Math.max(0, firstExpiry - Date.now()) + 1_500));
			const stored = await storeCard(observer, id);
			assert.equal(stored.status, 'claimed');
			assert.equal(stored.claimOwner, baton.hub.me);
			assert.ok(Date.parse(stored.leaseExpiresAt ?? '') > firstExpiry, 'the lease was renewed');
			await vscode.commands.executeCommand('baton.releaseCard', id);
			assert.equal((await storeCard(observer, id)).status, 'ready');
		} finally {
			observer.close();
		}
	}, 40_000);

	it('reconnects by itself after the hub is killed and keeps following events', async () => {
		const baton = await api();
		const dataDir = env('BATON_TEST_DATA_DIR');
		const oldPid = hubPid(dataDir);
		const states: HubState[] = [];
		const sub = baton.hub.onDidChangeState(s => states.push(s));
		try {
			process.kill(oldPid, 'SIGKILL');
			await waitFor(
				'a new hub',
				() => {
					try {
						return hubPid(dataDir) !== oldPid && baton.hub.state === 'connected';
					} catch {
						return false;
					}
				},
				60_000,
			);
			// Retries stay 'offline' until one succeeds: the status bar does not flicker per attempt.
			assert.deepEqual(states, ['offline', 'connected'], `went through ${states.join(' → ')}`);
			console.log(`states after kill -9 of the hub: ${states.join(' → ')}`);
			const observer = await agentClient(uniqueId('observer'));
			try {
				const id = uniqueId('after-restart');
				await observer.request('card/create', { cards: [{ id, title: 'Created after the restart' }] });
				await waitFor('the new card via the resumed event feed', () => baton.hub.cards.has(id));
			} finally {
				observer.close();
			}
		} finally {
			sub.dispose();
		}
	}, 70_000);

	it('shows an unreachable hub in the status bar in error colour, then recovers', async () => {
		const baton = await api();
		// A data dir whose socket path cannot fit in 107 bytes: connectHub refuses it at once.
		const tooLong = join(env('BATON_TEST_DATA_DIR'), 'x'.repeat(120));
		await config().update('dataDir', tooLong, vscode.ConfigurationTarget.Workspace);
		const offline = await waitFor('the offline status', () => {
			const s = baton.statusBar.summary;
			return s.level === 'error' && s.text.includes('offline') ? s : undefined;
		});
		assert.match(offline.tooltip, /too long/);
		const cardCount = () => baton.hub.cards.size;
		assert.equal(cardCount(), 0, 'no stale cards from the old backlog');
		await config().update('dataDir', env('BATON_TEST_DATA_DIR'), vscode.ConfigurationTarget.Workspace);
		await waitFor('the reconnection', () => baton.hub.state === 'connected', 30_000);
		assert.match(baton.statusBar.summary.text, /agents?/);
		assert.ok(cardCount() > 0, 'the backlog is back');
	}, 40_000);
});
