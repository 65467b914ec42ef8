/**
 * Commands change the store: each case runs a command through executeCommand (arguments instead of
 * prompts) and then asks the hub over a separate connection, never the extension's own cache.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Result } from '../../../core/protocol';
import type { RpcClient } from '../../../core/protocol/rpc';
import { after, before, describe, it } from './harness';
import { agentClient, api, env, storeCard, uniqueId, waitFor } from './helpers';

describe('commands', () => {
	let observer: RpcClient | undefined;
	let other: RpcClient | undefined;
	const otherId = uniqueId('codex');

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		observer = await agentClient(uniqueId('observer'));
		other = await agentClient(otherId);
	});

	after(() => {
		observer?.close();
		other?.close();
	});

	it('Claim Next Card claims the highest-priority ready card as vscode:<user>', async () => {
		assert.ok(observer);
		const baton = await api();
		const phase = uniqueId('claimnext');
		const low = uniqueId('low');
		const high = uniqueId('high');
		await observer.request('card/create', {
			cards: [
				{ id: low, title: 'Low priority', phase, priority: 1 },
				{ id: high, title: 'High priority', phase, priority: 9 },
			],
		});
		const r = await vscode.commands.executeCommand<Result<'card/claim'>>('baton.claimNextCard', { phase });
		assert.equal(r.card?.id, high);
		const stored = await storeCard(observer, high);
		assert.equal(stored.status, 'claimed');
		assert.equal(stored.claimOwner, baton.hub.me);
		assert.equal((await storeCard(observer, low)).status, 'ready', 'only one card is claimed');
		const lease = Date.parse(stored.leaseExpiresAt ?? '') - Date.now();
		assert.ok(lease > 250_000 && lease <= 300_000, `lease follows baton.claim.ttlSeconds (300 s): ${lease} ms`);
	});

	it('Reclaim Card… takes a card from another agent and fences its lease', async () => {
		assert.ok(observer && other);
		const id = uniqueId('reclaim');
		await other.request('card/create', { cards: [{ id, title: 'Held by another agent' }] });
		const claimed = await other.request('card/claim', { cardId: id, ttlSeconds: 600 });
		const epoch = claimed.lease?.epoch ?? -1;
		await waitFor(
			'the claim in the extension cache',
			async () => (await api()).hub.cards.get(id)?.status === 'claimed',
		);
		await vscode.commands.executeCommand('baton.reclaimCard', id, { confirm: false });
		const stored = await storeCard(observer, id);
		assert.equal(stored.status, 'ready');
		assert.equal(stored.claimOwner, null);
		assert.ok(stored.claimEpoch > epoch, `epoch moved on from ${epoch} to ${stored.claimEpoch}`);
		await assert.rejects(
			other.request('card/heartbeat', { cardId: id, epoch }),
			(e: Error & { code?: string }) => e.code === 'lease_lost' || e.code === 'invalid_transition',
			'the former holder is fenced out',
		);
	});

	it('Reclaim Agent’s Claims returns every card the agent holds', async () => {
		assert.ok(observer && other);
		const ids = [uniqueId('agentclaims'), uniqueId('agentclaims')];
		await other.request('card/create', { cards: ids.map(id => ({ id, title: `Agent work ${id}` })) });
		for (const id of ids) {
			await other.request('card/claim', { cardId: id, ttlSeconds: 600 });
		}
		const r = await vscode.commands.executeCommand<Result<'agent/reclaim'>>('baton.reclaimAgentClaims', otherId, {
			confirm: false,
		});
		assert.deepEqual(r.cards.map(c => c.id).sort(), [...ids].sort());
		for (const id of ids) {
			assert.equal((await storeCard(observer, id)).status, 'ready');
		}
	});

	it('Reclaim Expired Claims asks the hub to reclaim expired leases', async () => {
		assert.ok(observer);
		const r = await vscode.commands.executeCommand<Result<'card/reclaim'>>('baton.reclaimExpired', {
			confirm: false,
		});
		assert.ok(Array.isArray(r.cards));
		const stats = await observer.request('card/stats', {});
		assert.equal(stats.expiredClaims, 0, 'no expired claim is left');
	});

	it('Complete, Block, Unblock, Reopen and Link Dependency change the store', async () => {
		assert.ok(observer);
		const a = uniqueId('flow');
		const b = uniqueId('flow');
		await vscode.commands.executeCommand('baton.createCard', { id: a, title: 'First step' });
		await vscode.commands.executeCommand('baton.createCard', { id: b, title: 'Second step' });
		await waitFor('both cards in the cache', async () => (await api()).hub.cards.has(b));
		await vscode.commands.executeCommand('baton.linkDependency', b, [a]);
		assert.deepEqual((await storeCard(observer, b)).dependsOn, [a]);
		assert.equal((await storeCard(observer, b)).unmetDeps, 1);

		await vscode.commands.executeCommand('baton.blockCard', a, { reason: 'waiting for the API key' });
		assert.equal((await storeCard(observer, a)).status, 'blocked');
		assert.equal((await storeCard(observer, a)).blockedReason, 'waiting for the API key');
		await vscode.commands.executeCommand('baton.unblockCard', a);
		assert.equal((await storeCard(observer, a)).status, 'ready');

		await vscode.commands.executeCommand('baton.claimCard', a);
		await waitFor('the claim in the cache', async () => (await api()).hub.cards.get(a)?.status === 'claimed');
		await vscode.commands.executeCommand('baton.completeCard', a, { result: 'done in the test' });
		assert.equal((await storeCard(observer, a)).status, 'done');
		await waitFor('the dependent card no longer waiting', async () => (await api()).hub.cards.get(b)?.unmetDeps === 0);

		await vscode.commands.executeCommand('baton.reopenCard', a, { reason: 'regression' });
		assert.equal((await storeCard(observer, a)).status, 'ready');
		assert.equal((await storeCard(observer, b)).unmetDeps, 1, 'the dependent waits again');
	});

	it('refuses bad input with a clear error and changes nothing', async () => {
		assert.ok(observer);
		const a = uniqueId('cycle');
		const b = uniqueId('cycle');
		await observer.request('card/create', {
			cards: [
				{ id: a, title: 'A' },
				{ id: b, title: 'B', dependsOn: [a] },
			],
		});
		await waitFor('the cards in the cache', async () => (await api()).hub.cards.has(b));
		const linked = await vscode.commands.executeCommand('baton.linkDependency', a, [b]);
		assert.equal(linked, undefined, 'a cycle is refused');
		assert.deepEqual((await storeCard(observer, a)).dependsOn, []);
		const created = await vscode.commands.executeCommand('baton.createCard', { title: '' });
		assert.equal(created, undefined, 'an empty title is refused before it reaches the hub');
		const missing = await vscode.commands.executeCommand('baton.claimCard', 'no-such-card');
		assert.equal(missing, undefined);
	});

	it('writes the MCP config for this workspace after keeping other entries, and refuses a broken file', async () => {
		const ws = env('BATON_TEST_WORKSPACE');
		const file = join(ws, '.vscode', 'mcp.json');
		writeFileSync(file, JSON.stringify({ servers: { other: { type: 'stdio', command: 'other-server' } } }));
		const written = await vscode.commands.executeCommand('baton.configureMcpWorkspace', { confirm: false });
		assert.equal(written, file);
		const config = JSON.parse(readFileSync(file, 'utf8')) as {
			servers: Record<string, { type: string; command: string; args: string[]; env?: Record<string, string> }>;
		};
		assert.ok(config.servers.other, 'other servers are kept');
		const baton = config.servers.baton;
		assert.ok(baton);
		assert.equal(baton.type, 'stdio');
		assert.ok(baton.args.includes('mcp'));
		assert.equal(baton.env?.BATON_DATA_DIR, env('BATON_TEST_DATA_DIR'));

		const claude = join(ws, '.mcp.json');
		writeFileSync(claude, '{ not json');
		assert.equal(await vscode.commands.executeCommand('baton.configureMcpClaudeCode', { confirm: false }), undefined);
		assert.equal(readFileSync(claude, 'utf8'), '{ not json', 'a broken file is never overwritten');
		assert.ok(!existsSync(join(ws, '.cursor', 'mcp.json')));
	});
});
