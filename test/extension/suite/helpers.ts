/**
 * Shared helpers of the in-VS-Code suite: the extension's API, polling for observable state, and
 * outside clients (a plain hub connection, a real MCP client) that act as other agents on the same
 * data dir the extension uses.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as vscode from 'vscode';
import { connectHub } from '../../../core/client/connectHub';
import type { Card } from '../../../core/protocol';
import type { RpcClient } from '../../../core/protocol/rpc';
import type { BatonApi } from '../../../extension/main';
import { waitFor as poll } from '../../helpers/waitFor';
import type { UiCheckRequest, UiCheckResult } from '../uiChecks';

export const extensionId = 'baton-dev.baton-mcp';

export function env(name: string): string {
	const value = process.env[name];
	if (value === undefined || value === '') {
		throw new Error(`${name} is not set: run the suite through test/extension/runTest.ts`);
	}
	return value;
}

export async function api(): Promise<BatonApi> {
	const ext = vscode.extensions.getExtension<BatonApi>(extensionId);
	if (!ext) {
		throw new Error(`${extensionId} is not loaded`);
	}
	const exports = ext.isActive ? ext.exports : await ext.activate();
	// A failed activation leaves the extension active with no exports; say so instead of timing out later.
	if (typeof exports !== 'object') {
		throw new Error(`${extensionId} did not activate (see the activation case for the error)`);
	}
	return exports;
}

/**
 * Polls `probe` until it returns a value other than undefined/false, or fails naming `what`; a throwing
 * probe counts as "not yet" (the extension's state may still be settling). The what-first order of
 * the suite's many calls, over the tests' one poll.
 */
export function waitFor<T>(
	what: string,
	probe: () => T | undefined | false | Promise<T | undefined | false>,
	timeoutMs = 10_000,
): Promise<T> {
	return poll(probe, timeoutMs, what, { retryErrors: true, intervalMs: 50 });
}

/** Another agent on the same backlog, over its own hub connection (never spawns: the extension did). */
export function agentClient(id: string, dataDir = env('BATON_TEST_DATA_DIR')): Promise<RpcClient> {
	return connectHub({
		dataDir,
		client: 'test',
		agent: { id, name: id, client: 'test' },
		spawnHub: false,
		reconnect: false,
	});
}

/** The store's view of a card, asked over a separate connection (not the extension's cache). */
export async function storeCard(observer: RpcClient, id: string): Promise<Card> {
	return (await observer.request('card/get', { cardId: id })).card;
}

/** A real MCP client session: the SDK Client over stdio spawning `node dist/baton.js mcp`. */
export async function mcpAgent(
	agentId: string,
	dataDir = env('BATON_TEST_DATA_DIR'),
	extraEnv: Record<string, string> = {},
): Promise<Client> {
	const root = env('BATON_TEST_ROOT');
	const transport = new StdioClientTransport({
		command: process.execPath,
		args: [join(root, 'dist', 'baton.js'), 'mcp', '--agent', agentId],
		// Outside any git repository, so the agent has no project (and its cards none) unless the test
		// names one: started in the checkout, its cards took the checkout's folder name as their project
		// and the workspace's project filter hid them.
		cwd: tmpdir(),
		env: {
			...(process.env as Record<string, string>),
			BATON_DATA_DIR: dataDir,
			ELECTRON_RUN_AS_NODE: '1',
			...extraEnv,
		},
		stderr: 'pipe',
	});
	const client = new Client({ name: 'baton-extension-test', version: '1.0.0' });
	await client.connect(transport);
	return client;
}

/** Calls an MCP tool and returns its structured result, failing on an isError result. */
export async function callTool<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
	const r = await client.callTool({ name, arguments: args });
	if (r.isError === true) {
		throw new Error(`MCP tool ${name} failed: ${JSON.stringify(r.content)}`);
	}
	return r.structuredContent as T;
}

/** A unique id per run, so cases never see each other's cards. */
let counter = 0;
export function uniqueId(prefix: string): string {
	counter++;
	return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

/** Asks the shim to check the workbench with Playwright on this very page (uiChecks.ts). */
export async function uiCheck(request: UiCheckRequest): Promise<UiCheckResult> {
	const res = await fetch(env('BATON_UI_URL'), { method: 'POST', body: JSON.stringify(request) });
	const body = (await res.json()) as { ok: boolean; result?: UiCheckResult; error?: string };
	if (!body.ok || !body.result) {
		throw new Error(`UI check failed in the shim: ${body.error ?? 'no result'}`);
	}
	return body.result;
}
