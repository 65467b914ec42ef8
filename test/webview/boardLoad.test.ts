/**
 * The progressive load (webview/boardLoad.ts) in headless Chromium against a real hub, with
 * 2,500 ready cards (three pages of 1,000): the board is drawn with Ready's first page while the
 * second is held back on the wire, counting every ready card from the hub's stats; a card renamed and
 * one deleted by another client meanwhile, both on the held (now stale) page, show as the events say
 * once it arrives; and in the end Ready holds every card exactly once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';

import { makeCard } from '../helpers/cards';
import { waitFor } from '../helpers/hub';
import { BoardFixture } from './boardFixture';

const readyCount = 2500;
const id = (i: number): string => `R${String(i).padStart(4, '0')}`;

describe('board: live columns load progressively (Chromium, real hub)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let page: Page;
	/** Responses to Ready's page requests after the first, held until release(). */
	const held: string[] = [];
	let forward: ((message: string) => void) | undefined;
	let heldPage: (cards: Card[]) => void = () => undefined;
	const firstHeld = new Promise<Card[]>(resolve => {
		heldPage = resolve;
	});
	let holding = true;
	const release = (): void => {
		holding = false;
		for (const m of held.splice(0)) {
			forward?.(m);
		}
	};

	const readyCards = (): Promise<string[]> =>
		page.locator('.column-ready .card[data-id]').evaluateAll(els => els.map(e => (e as HTMLElement).dataset.id ?? ''));
	const readySetSize = async (): Promise<number> =>
		Number(await page.locator('.column-ready .card[data-id]').first().getAttribute('aria-setsize'));
	const marks = (): Promise<string[]> =>
		page.evaluate(() =>
			performance
				.getEntriesByType('mark')
				.map(m => m.name)
				.filter(n => n === 'baton:first-render' || n === 'baton:live-complete'),
		);
	before(async () => {
		board = await BoardFixture.start();
		admin = board.admin;
		for (let from = 0; from < readyCount; from += 1000) {
			const cards = Array.from({ length: Math.min(1000, readyCount - from) }, (_, k) =>
				makeCard({ id: id(from + k), title: `Ready ${from + k}` }),
			);
			await admin.request('data/import', { cards });
		}
		page = await board.newPage();
		// Relays the board's socket, holding back the answers to Ready's second and later pages.
		await page.routeWebSocket(/.*/, ws => {
			const server = ws.connectToServer();
			const heldIds = new Set<number>();
			forward = m => ws.send(m);
			ws.onMessage(m => {
				const text = m.toString();
				const frame = JSON.parse(text) as {
					id?: number;
					method?: string;
					params?: { status?: string; cursor?: string };
				};
				if (frame.method === 'card/list' && frame.params?.status === 'ready' && frame.params.cursor !== undefined) {
					heldIds.add(frame.id ?? -1);
				}
				server.send(text);
			});
			server.onMessage(m => {
				const text = m.toString();
				const frame = JSON.parse(text) as { id?: number; result?: { cards: Card[] } };
				if (holding && frame.id !== undefined && heldIds.has(frame.id)) {
					held.push(text);
					heldPage(frame.result?.cards ?? []);
					return;
				}
				ws.send(text);
			});
		});
		await board.open(page);
	});

	after(() => board.stop());

	it('draws with the first page, keeps events, and ends with every ready card once', async () => {
		const stale = await firstHeld;
		assert.equal(stale.length, 1000, 'the second page of Ready is held');
		assert.deepEqual(await marks(), ['baton:first-render'], 'drawn before the live pages are all in');
		assert.equal(await readySetSize(), 1000);
		assert.equal(await page.locator('.column-ready .column-count').innerText(), '2,500', "the hub's count");
		assert.equal(await page.locator('.column-ready .column-loading').isVisible(), true);

		// Another client renames one card and deletes another of the held page: the events come first.
		const renamed = stale[10]?.id ?? '';
		const deleted = stale[20]?.id ?? '';
		await admin.request('card/update', { cardId: renamed, title: 'Renamed during the load' });
		await admin.request('card/delete', { cardId: deleted });
		await waitFor(async () => (await readySetSize()) === 1001, 15_000, 'the rename to reach the board');

		release();
		await waitFor(async () => (await marks()).includes('baton:live-complete'), 15_000, 'every live page');
		assert.deepEqual(await marks(), ['baton:first-render', 'baton:live-complete']);
		await waitFor(async () => (await readySetSize()) === readyCount - 1, 15_000, 'the full Ready column');
		assert.equal(await page.locator('.column-ready .column-count').innerText(), '2,499');
		assert.equal(await page.locator('.column-ready .column-loading').isVisible(), false);

		// Every ready card exactly once, the deleted one not brought back by the stale page.
		const seen = new Map<number, string>();
		const scroller = page.locator('.column-ready .column-scroll');
		for (let step = 0; step < 1000; step++) {
			const rows = await page
				.locator('.column-ready .card[data-id]')
				.evaluateAll(els =>
					els.map(e => [Number(e.getAttribute('aria-posinset')), (e as HTMLElement).dataset.id ?? ''] as const),
				);
			for (const [pos, cardId] of rows) {
				seen.set(pos, cardId);
			}
			const end = await scroller.evaluate(s => {
				s.scrollTop += s.clientHeight;
				return s.scrollTop + s.clientHeight >= s.scrollHeight - 1;
			});
			if (end && seen.size >= readyCount - 1) {
				break;
			}
			await page.evaluate(() => new Promise(r => requestAnimationFrame(() => r(undefined))));
		}
		const ids = [...seen.values()];
		assert.equal(seen.size, readyCount - 1);
		assert.equal(new Set(ids).size, readyCount - 1, 'no card twice');
		assert.equal(ids.includes(deleted), false, 'the deleted card stays deleted');

		// The renamed card shows the event's title, not the held page's.
		await page.locator('.filter-text').fill('Renamed during the load');
		await waitFor(async () => (await readyCards()).length === 1, 15_000, 'the filter');
		assert.deepEqual(await readyCards(), [renamed]);
		assert.match(await page.locator(`.card[data-id="${renamed}"]`).innerText(), /Renamed during the load/);
	});
});
