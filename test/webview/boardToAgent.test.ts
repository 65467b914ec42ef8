/**
 * A board message to the agent, end to end: "a message typed on the board reaches the holder's next MCP tool result
 * within 1 s". A real `baton mcp` agent (the MCP SDK client over stdio) claims a card; the board, in
 * headless Chromium against the same hub, types a message into the card's detail and sends it with
 * Ctrl+Enter; the agent's next tool call (any tool: `stats` here, polled) carries it in `inbox`, and
 * the board then shows it delivered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { RpcClient } from '../../core/protocol/rpc';

import { type Agent, startAgent } from '../helpers/mcp';
import { BoardFixture } from './boardFixture';
import { cardIn } from './boardPage';

interface InboxItem {
	cardId: string;
	from: string;
	text: string;
	at: string;
}

describe('board → agent: a typed message reaches the holder (Chromium, real hub, real MCP agent)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let agent: Agent;
	let page: Page;

	before(async () => {
		board = await BoardFixture.start();
		admin = board.admin;
		await admin.request('card/create', { cards: [{ id: 'MSG-1', title: 'Port the parser to the v2 API' }] });
		agent = await startAgent(board.dataDir, { env: { BATON_AGENT: 'claude-inbox' } });
		const claimed = await agent.json<{ card: { id: string } }>('claim', { cardId: 'MSG-1' });
		assert.equal(claimed.card.id, 'MSG-1');
		page = await board.newPage();
		await board.open(page);
	});

	after(async () => {
		await agent.close().catch(() => undefined);
		await board.stop();
	});

	it('within 1 s, once, and the board shows it delivered', async () => {
		await cardIn(page, 'inProgress', 'MSG-1').click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-id', { hasText: 'MSG-1' }).waitFor();
		const box = pane.locator('.message-input');
		await box.fill('Stop: use the **v2** API, v1 is going away.');
		const sentAt = Date.now();
		await box.press('Control+Enter');
		let inbox: InboxItem[] | undefined;
		while (inbox === undefined && Date.now() - sentAt < 5_000) {
			const r = await agent.json<{ inbox?: InboxItem[] }>('stats');
			inbox = r.inbox;
		}
		const elapsed = Date.now() - sentAt;
		console.log(`board message -> the agent's next tool result in ${elapsed} ms`);
		assert.ok(inbox !== undefined, 'the message reached the agent');
		assert.ok(elapsed < 1_000, `took ${elapsed} ms`);
		const actor = await page.evaluate(() => document.body.dataset.actor);
		assert.deepEqual(
			inbox.map(m => [m.cardId, m.from, m.text]),
			[['MSG-1', actor, 'Stop: use the **v2** API, v1 is going away.']],
		);
		// Once: the next call does not repeat it.
		assert.equal((await agent.json<{ inbox?: InboxItem[] }>('stats')).inbox, undefined);
		const delivered = pane.locator('.message', { hasText: 'use the' }).locator('.message-delivered');
		await delivered.waitFor({ timeout: 3_000 });
		assert.match((await delivered.textContent()) ?? '', /^delivered /);
	});
});
