/**
 * UI checks run by vscodeShim.js with Playwright on the very code-server page the suite runs in
 * (TESTING.md selectors): Backlog rows, the status bar item and the board webview, plus the
 * screenshot for docs/. The suite asks for them over HTTP and asserts on what comes back.
 */
import type { FrameLocator, Page } from 'playwright-core';

export interface UiCheckRequest {
	/** Card titles that must be visible as tree rows. */
	rows: string[];
	/** A card title the board webview must render. */
	boardText?: string;
	/** Where to save a screenshot of the whole window. */
	screenshot?: string;
	/** Drag the side bar's sash to this width first (px), so tree descriptions fit. */
	sidebarWidth?: number;
	/** Tree rows (by label) to expand by clicking their twistie, if collapsed. */
	expand?: string[];
	/** Tree rows (by label) whose expanded state to report. */
	expandedState?: string[];
	/** Run a command from the palette (F1) and choose the quick-pick item containing `pick`. */
	palette?: { command: string; pick: string };
	/** Focus this card on the board and press these keys (before the screenshot). */
	boardKeys?: { cardId: string; keys: string[]; expectColumn: string };
}

export interface UiCheckResult {
	/** Which of the requested rows were found. */
	rowsFound: string[];
	statusBarText: string;
	boardRendered: boolean;
	/** The board's text, to check that card titles are rendered as text. */
	boardSample: string;
	/** Visible board webviews. */
	webviewFrames: number;
	/** The text of the quick-pick item chosen for `palette` (label, description and detail). */
	pickedItem: string | undefined;
	/** aria-expanded of the rows asked for in expandedState. */
	expanded: Record<string, boolean>;
	/** The card reached expectColumn on the board after boardKeys. */
	boardKeysMoved: boolean | undefined;
	screenshot: string | undefined;
}

function boardFrame(page: Page): FrameLocator {
	return page
		.locator('iframe.webview.ready[src*="extensionId=baton-dev.baton"]:visible')
		.first()
		.contentFrame()
		.frameLocator('#active-frame');
}

async function resizeSidebar(page: Page, width: number): Promise<void> {
	const box = await page.locator('.part.sidebar').boundingBox();
	if (!box) {
		return;
	}
	const x = box.x + box.width;
	const y = box.y + box.height / 2;
	await page.mouse.move(x, y);
	await page.mouse.down();
	await page.mouse.move(box.x + width, y, { steps: 8 });
	await page.mouse.up();
}

export async function runUiCheck(page: Page, request: UiCheckRequest): Promise<UiCheckResult> {
	if (request.sidebarWidth !== undefined) {
		await resizeSidebar(page, request.sidebarWidth);
	}
	const treeRow = (label: string) =>
		page.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: label }) }).first();
	for (const label of request.expand ?? []) {
		const row = treeRow(label);
		await row.waitFor({ state: 'visible', timeout: 10_000 });
		if ((await row.getAttribute('aria-expanded')) === 'false') {
			await row.click();
			await page
				.locator('.monaco-list-row[aria-expanded="true"]', { has: page.locator('.label-name', { hasText: label }) })
				.first()
				.waitFor({ timeout: 5_000 });
		}
	}
	const expanded: Record<string, boolean> = {};
	for (const label of request.expandedState ?? []) {
		expanded[label] = (await treeRow(label).getAttribute('aria-expanded', { timeout: 10_000 })) === 'true';
	}
	let pickedItem: string | undefined;
	if (request.palette !== undefined) {
		const { command, pick } = request.palette;
		await page.keyboard.press('F1');
		const input = page.locator('.quick-input-widget input');
		await input.waitFor({ state: 'visible', timeout: 5_000 });
		await input.fill(`>${command}`);
		await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor({ timeout: 5_000 });
		await page.keyboard.press('Enter');
		const item = page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first();
		await item.waitFor({ state: 'visible', timeout: 10_000 });
		pickedItem = (await item.innerText()).replace(/\s+/g, ' ').trim();
		await item.click();
		await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
	}
	const rowsFound: string[] = [];
	for (const title of request.rows) {
		const row = page.locator('.monaco-list-row', { hasText: title }).first();
		try {
			await row.waitFor({ state: 'visible', timeout: 10_000 });
			rowsFound.push(title);
		} catch {
			// Reported as missing; the suite asserts.
		}
	}
	const status = page.locator('.statusbar-item', { hasText: /agents?|Baton/ }).first();
	await status.waitFor({ state: 'visible', timeout: 10_000 });
	const statusBarText = (await status.innerText()).trim();

	let boardRendered = false;
	let boardSample = '';
	const webviewFrames = await page.locator('iframe.webview.ready[src*="extensionId=baton-dev.baton"]:visible').count();
	if (request.boardText !== undefined) {
		const frame = boardFrame(page);
		try {
			await frame.getByText(request.boardText, { exact: false }).first().waitFor({ state: 'visible', timeout: 15_000 });
			boardRendered = true;
		} catch {
			// Reported below.
		}
		boardSample = (
			await frame
				.locator('body')
				.innerText({ timeout: 5_000 })
				.catch(() => '')
		).slice(0, 2_000);
	}
	let boardKeysMoved: boolean | undefined;
	if (request.boardKeys !== undefined) {
		const { cardId, keys, expectColumn } = request.boardKeys;
		const frame = boardFrame(page);
		const card = frame.locator(`.card[data-id="${cardId}"]`);
		await card.focus({ timeout: 10_000 });
		for (const key of keys) {
			await card.press(key);
		}
		try {
			await frame.locator(`.column-${expectColumn} .card[data-id="${cardId}"]`).waitFor({ timeout: 5_000 });
			boardKeysMoved = true;
		} catch {
			boardKeysMoved = false;
		}
	}
	let screenshot: string | undefined;
	if (request.screenshot !== undefined) {
		// Let the last tree refresh and webview paint settle.
		await page.waitForTimeout(500);
		await page.screenshot({ path: request.screenshot });
		screenshot = request.screenshot;
	}
	return {
		rowsFound,
		statusBarText,
		boardRendered,
		boardSample,
		webviewFrames,
		pickedItem,
		expanded,
		boardKeysMoved,
		screenshot,
	};
}
