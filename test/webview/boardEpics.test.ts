/**
 * Epics and labels on the board, in headless Chromium against a real hub: an epic shows "N / M done" with its
 * bar and a child its epic's id and bar, both following live when a child completes; label chips; the
 * epic and label choices filter the columns (by keyboard too), say so when they hide every card, and
 * survive a redraw and a reload; the detail pane shows the epic, the children's roll-up and the links
 * that do not block (related, duplicates, and discovered-from set by an agent's create during a claim).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { RpcClient } from '../../core/protocol/rpc';

import { BoardFixture } from './boardFixture';
import { cardIn, watch, type PageWatch } from './boardPage';

describe('board: epics and labels (Chromium, real hub)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let page: Page;
	let seen: PageWatch;

	const waitShown = async (ids: string[]): Promise<void> => {
		await page.waitForFunction(
			want =>
				[...document.querySelectorAll<HTMLElement>('.board .card[data-id]')]
					.map(e => e.dataset.id)
					.sort()
					.join() === want,
			[...ids].sort().join(),
			{ timeout: 5000 },
		);
	};

	before(async () => {
		board = await BoardFixture.start();
		admin = board.admin;
		await admin.request('card/create', {
			cards: [
				{ id: 'SHOP-1', title: 'Checkout epic', autoClose: false },
				{ id: 'SHOP-2', title: 'Cart page', parent: 'SHOP-1', labels: ['ui'] },
				{ id: 'SHOP-3', title: 'Orders API', parent: 'SHOP-1', labels: ['api'] },
				{ id: 'SHOP-4', title: 'Pay button', parent: 'SHOP-1', labels: ['ui', 'api'] },
				{ id: 'SHOP-5', title: 'Receipt email', parent: 'SHOP-1' },
				{ id: 'SHOP-6', title: 'Refunds', parent: 'SHOP-1' },
				{ id: 'MISC-1', title: 'Write the docs', labels: ['docs'] },
			],
		});
		await admin.request('card/complete', { cardId: 'SHOP-2', force: true });
		await admin.request('card/complete', { cardId: 'SHOP-3', force: true });
		await admin.request('card/link', { cardId: 'SHOP-5', related: ['MISC-1'] });
		page = await board.newPage();
		seen = watch(page);
		await board.open(page);
	});

	after(() => board.stop());

	it('shows an epic’s progress and its children’s chips, and follows a child completing live', async () => {
		await page.waitForFunction(
			() => document.querySelector('.card[data-id="SHOP-1"] .tag-epic')?.textContent === '2 / 5 done',
		);
		const epic = cardIn(page, 'ready', 'SHOP-1');
		assert.match((await epic.getAttribute('aria-label')) ?? '', /epic, 2 \/ 5 done/);
		const width = () =>
			epic.locator('.card-progress-bar').evaluate(e => Math.round(parseFloat((e as HTMLElement).style.width)));
		assert.equal(await width(), 40, 'the epic’s bar shows the share done');
		const child = cardIn(page, 'ready', 'SHOP-4');
		assert.equal(await child.locator('.tag-parent').evaluate(e => e.firstChild?.textContent), 'SHOP-1');
		assert.equal(await child.locator('.tag-bar-fill').evaluate(e => (e as HTMLElement).style.width), '40%');
		assert.deepEqual(await child.locator('.tag-label').allTextContents(), ['api', 'ui']);
		assert.match((await child.getAttribute('aria-label')) ?? '', /part of SHOP-1, 2 \/ 5 done.*labels api, ui/);

		await admin.request('card/complete', { cardId: 'SHOP-4', force: true });
		await page.waitForFunction(
			() => document.querySelector('.card[data-id="SHOP-1"] .tag-epic')?.textContent === '3 / 5 done',
		);
		await cardIn(page, 'done', 'SHOP-4').waitFor();
		assert.equal(await width(), 60);
		assert.equal(
			await cardIn(page, 'ready', 'SHOP-5')
				.locator('.tag-bar-fill')
				.evaluate(e => (e as HTMLElement).style.width),
			'60%',
		);
	});

	it('filters by label, by keyboard too, and the choice survives a redraw and a reload', async () => {
		const labels = page.locator('select.filter-label');
		assert.deepEqual(await labels.locator('option').allTextContents(), ['All labels', 'api', 'docs', 'ui']);
		await labels.selectOption('ui');
		await waitShown(['SHOP-2', 'SHOP-4']);
		// Keyboard: the select is in the tab order and arrows change the choice.
		await labels.focus();
		await page.keyboard.press('ArrowUp');
		await waitShown(['MISC-1']);
		assert.equal(await labels.inputValue(), 'docs');
		await page.keyboard.press('ArrowDown');
		await waitShown(['SHOP-2', 'SHOP-4']);

		// A redraw: a new label comes (the choices are rebuilt), the choice holds and the new card shows.
		await admin.request('card/create', { cards: [{ id: 'SHOP-7', title: 'Dark mode', labels: ['ui', 'theme'] }] });
		await waitShown(['SHOP-2', 'SHOP-4', 'SHOP-7']);
		assert.deepEqual(await labels.locator('option').allTextContents(), ['All labels', 'api', 'docs', 'theme', 'ui']);
		assert.equal(await labels.inputValue(), 'ui');
		await board.open(page);
		assert.equal(await page.locator('select.filter-label').inputValue(), 'ui', 'remembered across a reload');
		await waitShown(['SHOP-2', 'SHOP-4', 'SHOP-7']);
		await page.locator('select.filter-label').selectOption('');
		await waitShown(['MISC-1', 'SHOP-1', 'SHOP-2', 'SHOP-3', 'SHOP-4', 'SHOP-5', 'SHOP-6', 'SHOP-7']);
	});

	it('filters by epic, and says so with a way back when the choices hide every card', async () => {
		const epics = page.locator('select.filter-epic');
		assert.deepEqual(await epics.locator('option').allTextContents(), ['All epics', 'SHOP-1 — Checkout epic']);
		await epics.selectOption('SHOP-1');
		await waitShown(['SHOP-1', 'SHOP-2', 'SHOP-3', 'SHOP-4', 'SHOP-5', 'SHOP-6']);
		await page.locator('select.filter-label').selectOption('docs');
		await waitShown([]);
		const empty = page.locator('.tag-empty');
		await empty.waitFor({ state: 'visible' });
		assert.equal((await empty.textContent())?.trim(), 'No cards match epic SHOP-1, label docs — clear epic and label');
		assert.equal(await page.locator('.column-ready .column-empty').textContent(), 'No cards match the filter.');
		await empty.getByRole('button', { name: 'clear epic and label' }).click();
		await waitShown(['MISC-1', 'SHOP-1', 'SHOP-2', 'SHOP-3', 'SHOP-4', 'SHOP-5', 'SHOP-6', 'SHOP-7']);
		assert.equal(await empty.isHidden(), true);
		assert.equal(await epics.inputValue(), '');
	});

	it('shows the epic, the children’s roll-up and the links in the detail pane', async () => {
		await cardIn(page, 'ready', 'SHOP-5').click();
		const links = page.locator('.detail .links');
		await links.waitFor();
		await page.waitForFunction(() => document.querySelector('.detail .links')?.textContent.includes('Checkout epic'));
		const text = (await links.textContent()) ?? '';
		assert.match(text, /Part of\s*SHOP-1/);
		assert.match(text, /Related\s*MISC-1/);
		await links.getByRole('button', { name: /^Open SHOP-1/ }).click();
		await page.waitForFunction(() => document.querySelector('.detail .children-rollup') !== null);
		assert.equal(
			await page.locator('.detail .children-rollup').textContent(),
			'3 / 5 done · 2 ready',
			'the roll-up of card/get',
		);

		// A card an agent creates while it holds SHOP-5: discovered from it, in its epic; then a duplicate.
		const agent = await board.agent('claude-code-1');
		await agent.request('card/claim', { cardId: 'SHOP-5' });
		const { cards } = await agent.request('card/create', { cards: [{ title: 'Receipt totals are off by a cent' }] });
		const found = cards[0]?.id ?? '';
		await admin.request('card/link', { cardId: found, duplicates: ['SHOP-6'] });
		await cardIn(page, 'ready', found).click();
		await page.waitForFunction(
			id =>
				document.querySelector('.detail .detail-id')?.textContent === id &&
				document.querySelector('.detail .links') !== null,
			found,
		);
		const foundText = (await page.locator('.detail .links').textContent()) ?? '';
		assert.match(foundText, /Part of\s*SHOP-1/);
		assert.match(foundText, /Duplicates\s*SHOP-6/);
		assert.match(foundText, /Discovered from\s*SHOP-5/);
		assert.deepEqual(seen.errors, []);
	});
});
