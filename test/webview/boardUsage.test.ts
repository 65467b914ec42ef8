/**
 * Usage on the board, in real headless Chromium against a real hub: a card's detail pane says what its
 * attempts' agents reported (tokens, and the cost, or "cost unknown"), per attempt and summed, and a
 * card nobody reported on says its usage is unknown rather than showing a number.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import { BoardFixture } from './boardFixture';
import { cardIn } from './boardPage';

describe('board: usage in the detail pane (Chromium, real hub)', () => {
	let board: BoardFixture;
	let page: Page;

	before(async () => {
		board = await BoardFixture.start();
		await board.admin.request('card/create', {
			cards: [
				{ id: 'USE-1', title: 'Port the tokenizer', priority: 2 },
				{ id: 'USE-2', title: 'Nobody reported', priority: 1 },
			],
		});
		const seat = await board.agent('claude-default-s1-ab12', 'mcp', { kind: 'claude' });
		const claimed = await seat.request('card/claim', {
			cardId: 'USE-1',
			dispatch: { run: 'default', seat: 1, kind: 'claude' },
		});
		const epoch = claimed.lease?.epoch ?? 0;
		await seat.request('dispatch/usage', {
			cardId: 'USE-1',
			epoch,
			usage: { inputTokens: 12345, outputTokens: 678, costUsd: 0.0421 },
		});
		page = await board.newPage();
		await board.open(page);
	});

	after(() => board.stop());

	it('shows the reported tokens and cost, summed and on the attempt', async () => {
		await cardIn(page, 'inProgress', 'USE-1').click();
		await page.waitForFunction(() => document.querySelector('.detail .facts')?.textContent.includes('Usage'));
		const facts = (await page.locator('.detail .facts').textContent()) ?? '';
		assert.match(facts, /Usage12,345 in \/ 678 out tokens, \$0\.0421/);
		const attempt = (await page.locator('.detail .attempt').first().textContent()) ?? '';
		assert.match(attempt, /12,345 in \/ 678 out tokens, \$0\.0421/);
		await page.keyboard.press('Escape');
	});

	it('says the usage is unknown when no attempt reported any', async () => {
		await cardIn(page, 'ready', 'USE-2').click();
		await page.waitForFunction(() => document.querySelector('.detail .facts')?.textContent.includes('Usage'));
		assert.match(
			(await page.locator('.detail .facts').textContent()) ?? '',
			/Usagecost unknown \(no attempt reported tokens or cost\)/,
		);
	});
});
