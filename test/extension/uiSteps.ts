/**
 * The workbench steps a UI check (uiChecks.ts) takes with Playwright on the code-server page: running a
 * command from the palette, picking from a quick pick or a status bar item's menu, and finding a
 * Backlog tree row that may be below the fold. Each retries what a redraw or a stolen focus can undo;
 * none asserts: the suite does, on what runUiCheck returns.
 */
import type { Locator, Page } from 'playwright-core';

/** Names the step that failed, so a timeout says where the UI got stuck. */
async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
	try {
		return await fn();
	} catch (error) {
		throw new Error(`${name}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
	}
}

/**
 * Opens the command palette and runs `command` from it. F1 is retried: while a webview iframe holds
 * keyboard focus the key can land in the iframe, so each retry first gives the workbench focus back
 * by clicking the status bar's empty middle. The palette can also close again before the command is
 * typed (a CI run's input went hidden right after it opened, and the fill waited 30 s): then it is
 * opened again, up to three times.
 */
async function openCommand(page: Page, command: string): Promise<void> {
	const input = page.locator('.quick-input-widget input');
	await step(`find "${command}" in the palette`, () =>
		thrice(
			async () => {
				await openPalette(page, input);
				await input.fill(`>${command}`, { timeout: 5_000 });
				await page
					.locator('.quick-input-list .monaco-list-row', { hasText: command })
					.first()
					.waitFor({ timeout: 5_000 });
			},
			() => page.keyboard.press('Escape'),
		),
	);
	await page.keyboard.press('Enter');
}

function openPalette(page: Page, input: Locator): Promise<void> {
	return step('open the command palette', () =>
		thrice(
			async () => {
				await page.keyboard.press('F1');
				await input.waitFor({ state: 'visible', timeout: 3_000 });
			},
			async () => {
				await page.keyboard.press('Escape');
				const bar = await page.locator('.part.statusbar').boundingBox();
				if (bar) {
					await page.mouse.click(bar.x + bar.width / 2, bar.y + bar.height / 2);
				}
			},
		),
	);
}

/** Runs `attempt` up to three times, `recover` after each failure but the last, which is thrown. */
export async function thrice<T>(
	attempt: () => Promise<T>,
	recover: (failed: number) => Promise<void> | void,
): Promise<T> {
	for (let n = 1; ; n++) {
		try {
			return await attempt();
		} catch (error) {
			if (n === 3) {
				throw error;
			}
			await recover(n);
		}
	}
}

/** What held the focus and what the notifications said: for the log when a quick pick went missing. */
async function focusReport(page: Page): Promise<string> {
	const focused = await page.evaluate(() => {
		const el = document.activeElement;
		const cls = el?.getAttribute('class') ?? '';
		return el ? `${el.tagName.toLowerCase()}${cls === '' ? '' : `.${cls.split(' ').join('.')}`}` : 'none';
	});
	const toasts = await page.locator('.notification-toast').allInnerTexts();
	return `focus on ${focused}, notifications ${JSON.stringify(toasts.map(t => t.replace(/\s+/g, ' ').trim()))}`;
}

/**
 * Opens the command palette, runs `command` and chooses the quick-pick item containing `pick`;
 * returns that item's text. The whole run is retried once when the command's own quick pick never
 * shows or closes before the item can be typed (a CI run once saw it gone, focus taken by a late
 * webview): a dismissed pick does nothing, so running the command again is safe.
 */
/** Clicks a status bar item and chooses an item of the quick pick it opens; returns that item's text. */
export async function pickFromStatusBar(page: Page, itemText: string, pick: string): Promise<string> {
	const item = page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first();
	return step(`click "${itemText}" in the status bar and choose "${pick}"`, async () => {
		await page.locator('.statusbar-item', { hasText: itemText }).first().click();
		await item.waitFor({ state: 'visible', timeout: 8_000 });
		const text = (await item.innerText()).replace(/\s+/g, ' ').trim();
		await item.click();
		await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
		return text;
	});
}

export async function runFromPalette(
	page: Page,
	command: string,
	pick: string,
	answer?: { prompt: string; text: string },
): Promise<string> {
	const input = page.locator('.quick-input-widget input');
	const item = page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first();
	let text: string | undefined;
	for (let attempt = 1; text === undefined; attempt++) {
		await openCommand(page, command);
		try {
			text = await step(`find the quick-pick item "${pick}"`, async () => {
				// The command's own quick pick has replaced the palette once the input no longer holds ">command".
				await page.waitForFunction(
					() => !(document.querySelector<HTMLInputElement>('.quick-input-widget input')?.value ?? '>').startsWith('>'),
					undefined,
					{ timeout: 8_000 },
				);
				// Typed as a user would: a long list renders only the rows in view, so the item may not be there
				// until the list is filtered.
				await input.fill(pick, { timeout: 8_000 });
				await item.waitFor({ state: 'visible', timeout: 8_000 });
				return (await item.innerText()).replace(/\s+/g, ' ').trim();
			});
		} catch (error) {
			if (attempt === 2) {
				throw error;
			}
			console.log(
				`ui: ${error instanceof Error ? error.message : String(error)}; ${await focusReport(page)}; running "${command}" again`,
			);
			await page.keyboard.press('Escape');
		}
	}
	await step('choose the quick-pick item', async () => {
		await item.click();
		if (answer === undefined) {
			await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
		}
	});
	if (answer !== undefined) {
		await step(`answer the input box "${answer.prompt}"`, async () => {
			await page
				.locator('.quick-input-widget', { hasText: answer.prompt })
				.waitFor({ state: 'visible', timeout: 8_000 });
			await input.fill(answer.text);
			await page.keyboard.press('Enter');
			await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
		});
	}
	return text;
}

/**
 * Whether a Backlog tree row showing `title` can be seen within `waitMs`. A tree renders only the rows
 * in view, and the sidebar shares its height between the Backlog, Agents and Board views, so a row low
 * in a short Backlog view is not in the page at all (a CI run once found none of the rows it asked
 * for): after a first wait of at most 2 s, the Backlog view is expanded if collapsed and walked from
 * the top, and walked again after each further wait until `waitMs` is over. (A first wait of the whole
 * 10 s spent 8 s for nothing on each row below the fold, about a minute of each VS Code run.)
 */
export async function findBacklogRow(page: Page, title: string, waitMs = 10_000): Promise<boolean> {
	const deadline = Date.now() + waitMs;
	const row = page.locator('.monaco-list-row', { hasText: title }).first();
	const seenWithin = (ms: number): Promise<boolean> =>
		row.waitFor({ state: 'visible', timeout: Math.max(1, ms) }).then(
			() => true,
			() => false, // not rendered yet, or out of view
		);
	if (await seenWithin(Math.min(2_000, waitMs))) {
		return true;
	}
	const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^backlog/i }) }).first();
	const header = pane.locator('.pane-header').first();
	const wasExpanded = await header.getAttribute('aria-expanded');
	if (wasExpanded === 'false') {
		await header.click();
	}
	const list = pane.locator('.monaco-list').first();
	const rendered = await pane.locator('.monaco-list-row').allInnerTexts();
	console.log(
		`ui: "${title}" not in view; Backlog view expanded=${wasExpanded}, ${rendered.length} rows rendered: ${JSON.stringify(rendered.map(r => r.split('\n')[0]))}`,
	);
	if (!(await list.isVisible())) {
		return false;
	}
	for (;;) {
		if (await walkTo(page, list, row)) {
			return true;
		}
		const left = deadline - Date.now();
		if (left <= 0) {
			break;
		}
		if (await seenWithin(Math.min(2_000, left))) {
			return true;
		}
	}
	const after = await pane
		.locator('.monaco-list-row')
		.evaluateAll(rows => rows.map(r => `${r.getAttribute('aria-expanded') ?? '-'} ${r.textContent.slice(0, 40)}`));
	const focused = await page.evaluate(() => document.activeElement?.className ?? 'none');
	console.log(`ui: "${title}" still not in view after the walk (focus on ${focused}): ${JSON.stringify(after)}`);
	return false;
}

/**
 * Walks the tree from its top with the keyboard, as a user would, until `row` is visible: the list
 * scrolls its focused row into view on every key, where a mouse wheel's scroll depends on where the
 * pointer lands and on the list's smooth-scrolling (the row was sometimes never reached that way).
 */
async function walkTo(page: Page, list: Locator, row: Locator): Promise<boolean> {
	await list.focus();
	await page.keyboard.press('Home');
	for (let i = 0; i < 60; i++) {
		if (await row.isVisible()) {
			return true;
		}
		await page.keyboard.press('ArrowDown');
		await page.waitForTimeout(30);
	}
	return row.isVisible();
}
