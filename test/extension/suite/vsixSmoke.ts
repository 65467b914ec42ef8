/** Smoke suite for the installed .vsix (vsixTest.ts): the packaged copy activates, spawns its hub and claims. */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { Result } from '../../../core/protocol';
import { describe, it, runAll } from './harness';
import { agentClient, api, env, extensionId, storeCard, waitFor } from './helpers';

describe('installed .vsix', () => {
	it('runs from the extensions dir, spawns the packaged hub and claims a card', async () => {
		const ext = vscode.extensions.getExtension(extensionId);
		assert.ok(ext, 'the .vsix is installed');
		assert.ok(ext.extensionPath.startsWith(env('BATON_TEST_EXTENSIONS_DIR')), `runs from ${ext.extensionPath}`);
		const baton = await api();
		console.log(
			`installed copy: module evaluation ${baton.moduleLoadMs.toFixed(1)} ms + activate() ${baton.activationMs.toFixed(1)} ms (CPU ${baton.activationCpuMs.toFixed(1)} ms)`,
		);
		await waitFor('the hub spawned from the packaged dist/baton.js', () => baton.hub.state === 'connected', 60_000);
		const observer = await agentClient('vsix-observer');
		try {
			await observer.request('card/create', { cards: [{ id: 'VSIX-1', title: 'Packaged and working' }] });
			const r = await vscode.commands.executeCommand<Result<'card/claim'>>('baton.claimNextCard');
			assert.equal(r.card?.id, 'VSIX-1');
			assert.equal((await storeCard(observer, 'VSIX-1')).claimOwner, baton.hub.me);
		} finally {
			observer.close();
		}
	});
});

export async function run(): Promise<void> {
	const summary = await runAll();
	if (summary.failed > 0) {
		throw new Error(`${summary.failed} test(s) failed`);
	}
}
