/**
 * The setup every Chromium board test repeats: a real hub on a fresh data dir, the planner's client,
 * clients for agents, headless Chromium at 1440×900, the board opened through a one-time ticket, and
 * one stop() that closes all of it in reverse order. Test code only: what a test seeds, and anything
 * it starts itself (an MCP agent, a PostgreSQL schema), is its own.
 */
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';

import type { AgentInfo, ClientKind } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';

import { chromiumArgs } from '../helpers/chromium';
import { type HubProcess, client, hubEnv, removeDataDir, startHub, tempDataDir } from '../helpers/hub';

export class BoardFixture {
	private browser: Browser | undefined;
	private readonly clients: RpcClient[] = [];

	private constructor(
		readonly dataDir: string,
		readonly hub: HubProcess,
		/** The planner's client: creates, imports and reads cards. */
		readonly admin: RpcClient,
	) {}

	/** A hub on a fresh data dir (PGlite unless `env` says otherwise) and the planner's client. */
	static async start(env: NodeJS.ProcessEnv = hubEnv()): Promise<BoardFixture> {
		const dataDir = tempDataDir();
		const hub = await startHub({ dataDir, env });
		const admin = await client(dataDir, { agent: { id: 'planner', name: 'planner', client: 'test' } });
		const fixture = new BoardFixture(dataDir, hub, admin);
		fixture.clients.push(admin);
		return fixture;
	}

	/** A client acting for agent `id` (a `test` client unless `kind` says otherwise); closed by stop(). */
	async agent(id: string, kind: ClientKind = 'test', info: Partial<AgentInfo> = {}): Promise<RpcClient> {
		const c = await client(this.dataDir, { client: kind, agent: { id, name: id, client: kind, ...info } });
		this.clients.push(c);
		return c;
	}

	/** A fresh browser context at the boards' size (Chromium starts on first use); closed by stop(). */
	async newContext(): Promise<BrowserContext> {
		this.browser ??= await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
		return this.browser.newContext({ viewport: { width: 1440, height: 900 } });
	}

	async newPage(): Promise<Page> {
		return (await this.newContext()).newPage();
	}

	/** Opens the board in `page` through a one-time ticket and waits until it has drawn. */
	async open(page: Page): Promise<void> {
		const { url } = await this.admin.request('hub/boardTicket', {});
		await page.goto(url);
		await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
	}

	/** Closes Chromium, every client, the hub, and removes the data dir. */
	async stop(): Promise<void> {
		await this.browser?.close();
		for (const c of this.clients.reverse()) {
			c.close();
		}
		await this.hub.stop();
		removeDataDir(this.dataDir);
	}
}
