/**
 * The MCP server definition provider in a VS Code that has the API (≥ 1.101): VS Code asks the
 * provider for the server, starts `dist/baton.js mcp` as it says, lists the server's tools as language
 * model tools, and a tool call made through VS Code reaches the hub the extension is connected to;
 * after a switch of baton.dataDir, VS Code restarts the server, which then works on the new backlog.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { describe, it } from './harness';
import { agentClient, api, env, uniqueId, waitFor } from './helpers';

/** Baton's tools as VS Code lists them (VS Code prefixes each MCP tool's name with its server's). */
function batonTools(): readonly vscode.LanguageModelToolInformation[] {
	return vscode.lm.tools.filter(t => /baton/i.test(t.name));
}

/** VS Code's id for the server the provider gives: the extension's id, then the server's label. */
const serverId = 'baton-dev.baton-mcp/Baton';

/** Calls Baton's `tool` through VS Code, as agent mode does; returns the tool's text answer. */
async function callThroughVsCode(tool: string, input: object): Promise<string> {
	const found = batonTools().find(t => t.name.endsWith(`_${tool}`));
	assert.ok(found, `the ${tool} tool is listed`);
	const result = await vscode.lm.invokeTool(found.name, { input, toolInvocationToken: undefined });
	return result.content.map(part => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

/** The cards whose title holds `text`, asked over a connection of its own to the hub of `dataDir`. */
async function cardsIn(dataDir: string, text: string): Promise<string[]> {
	const observer = await agentClient(uniqueId('observer'), dataDir);
	try {
		const { cards } = await observer.request('card/list', { text });
		return cards.map(c => c.title);
	} finally {
		observer.close();
	}
}

describe('MCP server definition provider', () => {
	it('VS Code starts the server Baton provides and lists its tools', async () => {
		const baton = await api();
		assert.ok(baton.mcp.registered, `VS Code ${vscode.version} has the API, so the provider is registered`);
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		// What the Start Server action of the MCP servers view runs; waits until the tools are listed.
		await vscode.commands.executeCommand('workbench.mcp.startServer', serverId, {
			waitForLiveTools: true,
			autoTrustChanges: true,
		});
		const tools = await waitFor(
			'Baton tools among vscode.lm.tools',
			() => batonTools().length >= 11 && batonTools(),
			60_000,
		);
		const names = tools.map(t => t.name).join(', ');
		console.log(`VS Code ${vscode.version} lists: ${names}`);
		for (const tool of ['claim', 'heartbeat', 'complete', 'create', 'list']) {
			assert.ok(
				tools.some(t => t.name.endsWith(`_${tool}`)),
				`VS Code lists Baton's ${tool} tool (it lists: ${names})`,
			);
		}
	}, 120_000);

	it('a tool call made through VS Code reaches the hub', async () => {
		const title = uniqueId('made through VS Code agent mode');
		const text = await callThroughVsCode('create', { title });
		assert.match(text, new RegExp(title), `the tool's answer names the card (got: ${text.slice(0, 300)})`);
		assert.deepEqual(await cardsIn(env('BATON_TEST_DATA_DIR'), title), [title], 'the card is in the backlog shown');
	}, 60_000);

	it('follows baton.dataDir: after a switch, VS Code restarts the server onto the new backlog', async () => {
		const baton = await api();
		const dataDir = env('BATON_TEST_DATA_DIR');
		const demoDir = env('BATON_TEST_DEMO_DIR');
		const settings = vscode.workspace.getConfiguration('baton');
		await settings.update('dataDir', demoDir, vscode.ConfigurationTarget.Workspace);
		try {
			await waitFor('the other hub', () => baton.hub.dataDir === demoDir && baton.hub.state === 'connected', 60_000);
			// The provider has told VS Code its definition changed, and VS Code restarts the running server
			// with it by itself (no command, no reload), a moment later. A card only the new backlog has
			// shows when the server has moved; only read-only calls until then, so the old backlog stays
			// clean.
			const marker = uniqueId('marker');
			const demo = await agentClient(uniqueId('demo'), demoDir);
			try {
				await demo.request('card/create', { cards: [{ id: marker, title: 'only in the new backlog' }] });
			} finally {
				demo.close();
			}
			await waitFor(
				'VS Code’s server on the new backlog',
				async () => (await callThroughVsCode('show', { cardId: marker })).includes('only in the new backlog'),
				60_000,
			);
			const title = uniqueId('after the switch');
			await callThroughVsCode('create', { title });
			assert.deepEqual(await cardsIn(demoDir, title), [title], 'the card went to the new backlog');
			assert.deepEqual(await cardsIn(dataDir, title), [], 'and not to the old one');
		} finally {
			await settings.update('dataDir', dataDir, vscode.ConfigurationTarget.Workspace);
			await waitFor(
				'the first hub again',
				() => baton.hub.dataDir === dataDir && baton.hub.state === 'connected',
				60_000,
			);
		}
	}, 180_000);
});
