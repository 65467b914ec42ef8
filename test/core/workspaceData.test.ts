/**
 * The workspaces' data on real PGlite and PostgreSQL: per-project settings (defaults,
 * partial updates, roots merged per host) and a card's workspace record, which every card read carries
 * only when set, logged as an `updated` event, and which the hot claim path's card keeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { Card, type CardWorkspace } from '../../core/protocol';
import { backlogForSuite, storeKinds } from '../helpers/backlog';

const human: OpContext = { actor: 'cli:alice' };

for (const kind of storeKinds) {
	describe(`workspace data on ${kind}`, () => {
		let b: Backlog;
		backlogForSuite(kind, {}, t => {
			b = t.backlog;
		});

		it('gives a project without settings the defaults, and updates only what is named', async () => {
			assert.deepEqual(await b.projectSettings('acme/web'), {
				project: 'acme/web',
				worktrees: false,
				land: 'squash',
				push: false,
				setupTimeoutSeconds: 600,
				checkTimeoutSeconds: 600,
				wipDays: 30,
				roots: {},
			});
			const on = await b.updateProjectSettings(human, {
				project: 'acme/web',
				worktrees: true,
				base: 'main',
				setup: 'npm ci',
				roots: { laptop: '/src/web', ci: '/build/web' },
			});
			assert.equal(on.worktrees, true);
			assert.equal(on.base, 'main');
			assert.equal(on.setup, 'npm ci');
			const next = await b.updateProjectSettings(human, {
				project: 'acme/web',
				land: 'rebase',
				setup: null,
				roots: { ci: null, desk: '/home/a/web' },
			});
			assert.deepEqual(next, {
				project: 'acme/web',
				worktrees: true,
				base: 'main',
				land: 'rebase',
				push: false,
				setupTimeoutSeconds: 600,
				checkTimeoutSeconds: 600,
				wipDays: 30,
				roots: { laptop: '/src/web', desk: '/home/a/web' },
			});
			assert.deepEqual(await b.projectSettings('acme/web'), next);
			assert.equal((await b.projectSettings('other')).worktrees, false, 'settings are per project');
			const checked = await b.updateProjectSettings(human, {
				project: 'acme/web',
				check: 'npm test',
				checkTimeoutSeconds: 90,
			});
			assert.deepEqual([checked.check, checked.checkTimeoutSeconds, checked.land], ['npm test', 90, 'rebase']);
			const cleared = await b.updateProjectSettings(human, { project: 'acme/web', check: null });
			assert.deepEqual([cleared.check, cleared.checkTimeoutSeconds], [undefined, 90]);
		});

		it('records a workspace on the card, logs it as updated, and leaves it out when there is none', async () => {
			await b.create(human, { cards: [{ id: 'W1', title: 'with a workspace' }] });
			const plain = (await b.get(human, { cardId: 'W1' })).card;
			assert.equal('workspace' in plain, false, 'absent, not null');
			const workspace: CardWorkspace = {
				root: '/src/web',
				path: '/src/web/.baton/worktrees/W1',
				branch: 'baton/W1',
				base: 'main',
				host: 'laptop',
			};
			const seen: string[] = [];
			const off = b.onCommitted(events => {
				for (const e of events) {
					seen.push(`${e.type}:${JSON.stringify((e.data as { changed?: unknown }).changed)}`);
				}
			});
			const card = await b.setWorkspace({ actor: 'hub', requestKey: 'k1' }, 'W1', workspace);
			off();
			assert.deepEqual(card.workspace, workspace);
			assert.equal(card.version, plain.version + 1);
			assert.deepEqual(seen, ['updated:["workspace"]']);
			assert.equal(Card.safeParse(card).success, true);
			const claimed = await b.claim({ actor: 'agent-1' }, { cardId: 'W1' });
			assert.deepEqual(claimed.card?.workspace, workspace, 'the claim path carries it');
			const listed = (await b.list(human, {})).cards.find(c => c.id === 'W1');
			assert.deepEqual(listed?.workspace, workspace);
			const cleared = await b.setWorkspace(human, 'W1', null);
			assert.equal('workspace' in cleared, false);
			await assert.rejects(b.setWorkspace(human, 'NOPE', null), /does not exist/);
		});
	});
}
