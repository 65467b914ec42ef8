/**
 * What the Chromium board tests share: a watch on CSP violations, page errors and dialogs, locating a
 * card in a column, a real mouse drag onto a column, and reading a card back from the hub (waiting
 * until the store shows a change). Test code only; it starts nothing.
 */
import assert from 'node:assert/strict';

import type { Locator, Page } from 'playwright-core';

import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';

/** Collects CSP violations, page errors and alert dialogs from the moment the page starts. */
export const watchScript = `
	window.__cspViolations = [];
	document.addEventListener('securitypolicyviolation', e => {
		window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
	});
`;

export interface PageWatch {
	dialogs: string[];
	errors: string[];
}

export function watch(page: Page): PageWatch {
	const w: PageWatch = { dialogs: [], errors: [] };
	page.on('dialog', d => {
		w.dialogs.push(`${d.type()}: ${d.message()}`);
		void d.dismiss();
	});
	page.on('pageerror', e => w.errors.push(e.message));
	page.on('console', m => {
		if (m.type() === 'error') {
			w.errors.push(m.text());
		}
	});
	return w;
}

export const cardIn = (page: Page, column: string, id: string): Locator =>
	page.locator(`.column-${column} .card[data-id="${id}"]`);

/** A real mouse drag: press on the card, move in steps, release over the target point. */
export async function drag(page: Page, from: Locator, to: { x: number; y: number }): Promise<void> {
	const box = await from.boundingBox();
	assert.ok(box, 'the dragged card is on screen');
	await page.mouse.move(box.x + box.width / 2, box.y + 20);
	await page.mouse.down();
	await page.mouse.move(box.x + box.width / 2 + 10, box.y + 30, { steps: 2 });
	await page.mouse.move(to.x, to.y, { steps: 12 });
	await page.mouse.up();
}

export async function columnPoint(page: Page, column: string, yFraction = 0.5): Promise<{ x: number; y: number }> {
	const box = await page.locator(`.column-${column} .column-scroll`).boundingBox();
	assert.ok(box);
	return { x: box.x + box.width / 2, y: box.y + box.height * yFraction };
}

export async function storeCard(admin: RpcClient, id: string): Promise<Card> {
	return (await admin.request('card/get', { cardId: id })).card;
}

export async function waitForStore(
	admin: RpcClient,
	id: string,
	ok: (c: Card) => boolean,
	what: string,
): Promise<Card> {
	const deadline = Date.now() + 5000;
	for (;;) {
		const c = await storeCard(admin, id);
		if (ok(c)) {
			return c;
		}
		if (Date.now() > deadline) {
			throw new Error(`store never showed ${what} for ${id}: ${JSON.stringify(c)}`);
		}
		await new Promise(r => setTimeout(r, 50));
	}
}
