/**
 * Done by pages in headless Chromium against a real hub: the board loads Done newest first,
 * 200 cards at a time, and the next page as the user scrolls to the end, with no duplicate and no gap;
 * the column counts every done card (the hub's stats, then the events), also while most are not
 * loaded; a card completed live lands on top of Done; a done card of an unloaded page that changes,
 * reopens or is deleted is shown once, where it belongs, or not at all; a text filter searches the
 * hub for done cards beyond the loaded pages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { RpcClient } from '../../core/protocol/rpc';

import { makeCard } from '../helpers/cards';
import { waitFor } from '../helpers/hub';
import { BoardFixture } from './boardFixture';

const doneCount = 450;
const id = (i: number): string => `D${String(i).padStart(3, '0')}`;
/** Every 50th card (7, 57, …, 407) has the word the filter test searches for. */
const needles = Array.from({ length: doneCount }, (_, i) => i).filter(i => i % 50 === 7);

describe('board: Done by pages (Chromium, real hub)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let agent: RpcClient;
	let page: Page;

	const open = (): Promise<void> => board.open(page);
	const count = (): Promise<string> => page.locator('.column-done .column-count').innerText();
	/** The ids of Done's rendered rows, in column order (rows are virtualised and positioned). */
	const topOfDone = (): Promise<string[]> =>
		page.locator('.column-done .card[data-id]').evaluateAll(els =>
			els
				.map(e => e as HTMLElement)
				.sort((a, b) => Number(a.getAttribute('aria-posinset')) - Number(b.getAttribute('aria-posinset')))
				.map(e => e.dataset.id ?? ''),
		);
	before(async () => {
		board = await BoardFixture.start();
		admin = board.admin;
		agent = await board.agent('claude-code-1');
		const base = Date.parse('2026-04-01T08:00:00.000Z');
		await admin.request('data/import', {
			cards: Array.from({ length: doneCount }, (_, i) =>
				makeCard({
					id: id(i),
					title: needles.includes(i) ? `Needle ${i}` : `Finished ${i}`,
					status: 'done',
					result: 'ok',
					createdAt: new Date(base - 86_400_000).toISOString(),
					updatedAt: new Date(base + i * 1000).toISOString(),
				}),
			),
		});
		await admin.request('card/create', {
			cards: [
				{ id: 'R1', title: 'Live one' },
				{ id: 'R2', title: 'Waiting one' },
			],
		});
		page = await board.newPage();
		await open();
	});

	after(() => board.stop());

	it('loads the first page newest first and counts every done card', async () => {
		assert.equal(await count(), '450');
		const top = await topOfDone();
		assert.deepEqual(top.slice(0, 3), [id(449), id(448), id(447)]);
		const setSize = await page.locator('.column-done .card[data-id]').first().getAttribute('aria-setsize');
		assert.equal(setSize, '200', 'one page of 200 is loaded');
		assert.equal(await page.locator('.column-done .column-more').innerText(), '250 more');
		assert.deepEqual(
			await page
				.locator('.column-ready .card[data-id]')
				.evaluateAll(els => els.map(e => (e as HTMLElement).dataset.id).sort()),
			['R1', 'R2'],
		);
	});

	it('keeps Done right under live events, for loaded and unloaded cards alike', async () => {
		// A done card far below the loaded page changes: it is the newest change now, so it shows on top.
		await admin.request('card/update', { cardId: id(10), title: 'Finished 10, renamed' });
		await waitFor(async () => (await topOfDone())[0] === id(10), 10_000, 'D010 on top of Done');
		assert.equal(await count(), '450');
		// A live completion lands on top of Done and counts.
		const { lease } = await agent.request('card/claim', { cardId: 'R1' });
		await agent.request('card/complete', { cardId: 'R1', epoch: lease?.epoch, result: 'shipped' });
		await waitFor(async () => (await topOfDone())[0] === 'R1', 10_000, 'R1 on top of Done');
		assert.equal(await count(), '451');
		// An unloaded done card reopened goes to Ready; one deleted is no longer counted.
		await admin.request('card/reopen', { cardId: id(5) });
		await waitFor(
			async () => (await page.locator('.column-ready .card[data-id="D005"]').count()) === 1,
			10_000,
			'D005 in Ready',
		);
		await admin.request('card/delete', { cardId: id(3) });
		await waitFor(async () => (await count()) === '449', 10_000, 'the count to drop to 449');
	});

	it('loads the next pages as Done scrolls to its end: every card once, newest first', async () => {
		const seen = new Map<number, string>();
		for (let step = 0; step < 200; step++) {
			const rows = await page
				.locator('.column-done .card[data-id]')
				.evaluateAll(els =>
					els.map(e => [Number(e.getAttribute('aria-posinset')), (e as HTMLElement).dataset.id ?? ''] as const),
				);
			for (const [pos, cardId] of rows) {
				seen.set(pos, cardId);
			}
			const end = await page.locator('.column-done .column-scroll').evaluate(s => {
				s.scrollTop += s.clientHeight;
				s.dispatchEvent(new Event('scroll'));
				return s.scrollTop + s.clientHeight >= s.scrollHeight - 2;
			});
			if (end && (await page.locator('.column-done .column-more').isHidden())) {
				const last = await page
					.locator('.column-done .card[data-id]')
					.evaluateAll(els =>
						els.map(e => [Number(e.getAttribute('aria-posinset')), (e as HTMLElement).dataset.id ?? ''] as const),
					);
				for (const [pos, cardId] of last) {
					seen.set(pos, cardId);
				}
				break;
			}
			await page.waitForTimeout(30);
		}
		const ids = [...seen.entries()].sort((a, b) => a[0] - b[0]).map(e => e[1]);
		const expected = [
			'R1',
			id(10),
			...Array.from({ length: doneCount }, (_, i) => doneCount - 1 - i)
				.filter(i => i !== 10 && i !== 5 && i !== 3)
				.map(id),
		];
		assert.equal(ids.length, expected.length, 'every position seen once');
		assert.equal(new Set(ids).size, ids.length, 'no card twice');
		assert.deepEqual(ids, expected);
		assert.equal(await count(), '449');
		assert.equal(await page.locator('.column-done .card[data-id]').first().getAttribute('aria-setsize'), '449');
	});

	it('searches the hub for done cards beyond the loaded pages, and keeps the More button in reach of the keyboard', async () => {
		await open();
		const filter = page.locator('input.filter-text');
		await filter.fill('needle');
		const want = [...needles].reverse().map(id);
		await waitFor(async () => (await topOfDone()).join() === want.join(), 10_000, 'every needle in Done');
		assert.equal(await count(), String(want.length));
		await filter.fill('');
		await waitFor(async () => (await count()) === '449', 10_000, 'Done unfiltered again');
		// The footer is a button: Tab reaches it and Enter loads the next page.
		const more = page.locator('.column-done .column-more');
		await waitFor(async () => (await more.innerText()) === '249 more', 10_000, 'the first page again');
		await more.focus();
		await page.keyboard.press('Enter');
		await waitFor(async () => (await more.innerText()) === '49 more', 10_000, 'a second page');
	});
});
