/**
 * A card's own base branch (`--base`) through the Backlog on real PGlite and PostgreSQL: set
 * at create, shown by get and list, changed and dropped by edit (logged as `updated`), refused once the
 * card has a branch not yet landed, and kept by export/import and by a full backup's rows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { formatExport, parseExport } from '../../core/formats/export';
import { backupRowProblem } from '../../core/formats/backupRows';
import { Card, type CardWorkspace } from '../../core/protocol';
import { backlogForSuite, openTestBacklog, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'cli:alice' };

for (const kind of storeKinds) {
	describe(`a card's own base branch on ${kind}`, () => {
		let b: Backlog;
		backlogForSuite(kind, {}, t => {
			b = t.backlog;
		});
		const get = async (id: string) => (await b.get(human, { cardId: id })).card;

		it('is set at create, shown, changed and dropped by edit', async () => {
			const made = await b.create(human, {
				cards: [
					{ id: 'B1', title: 'on a release branch', base: 'release/2.0' },
					{ id: 'B2', title: 'on the project base' },
				],
			});
			assert.deepEqual(
				made.cards.map(c => [c.id, c.base]),
				[
					['B1', 'release/2.0'],
					['B2', null],
				],
			);
			assert.equal((await get('B1')).base, 'release/2.0');
			assert.equal(Card.safeParse(await get('B1')).success, true);
			const listed = (await b.list(human, {})).cards.find(c => c.id === 'B1');
			assert.equal(listed?.base, 'release/2.0');

			const seen: string[] = [];
			const off = b.onCommitted(events => {
				for (const e of events) {
					seen.push(`${e.type}:${JSON.stringify((e.data as { changed?: unknown }).changed)}`);
				}
			});
			const edited = await b.update(human, { cardId: 'B2', base: 'feature/x' });
			off();
			assert.equal(edited.card.base, 'feature/x');
			assert.deepEqual(seen, ['updated:["base"]']);
			const same = await b.update(human, { cardId: 'B2', base: 'feature/x' });
			assert.equal(same.card.version, edited.card.version, 'no change, no new version');
			const dropped = await b.update(human, { cardId: 'B2', base: null });
			assert.equal(dropped.card.base, null);
			assert.equal((await get('B2')).base, null);
		});

		it('refuses a change once the card has a branch that has not landed, naming it', async () => {
			await b.create(human, { cards: [{ id: 'B3', title: 'has a branch', base: 'main' }] });
			const workspace: CardWorkspace = {
				root: '/src/web',
				path: '/src/web/.baton/worktrees/B3',
				branch: 'baton/B3',
				base: 'main',
				host: 'laptop',
			};
			await b.setWorkspace(human, 'B3', workspace);
			await refused(b.update(human, { cardId: 'B3', base: 'develop' }), 'invalid_transition', /baton\/B3.*main/);
			assert.equal((await get('B3')).base, 'main', 'nothing changed');
			await b.setWorkspace(human, 'B3', {
				...workspace,
				landed: { mode: 'squash', commit: 'a'.repeat(40), at: new Date().toISOString() },
			});
			assert.equal((await b.update(human, { cardId: 'B3', base: 'develop' })).card.base, 'develop');
		});

		it('survives export and import, and a backup row carries it', async () => {
			const { cards } = await b.exportCards({});
			const file = parseExport(formatExport(cards));
			assert.equal(file.cards.find(c => c.id === 'B1')?.base, 'release/2.0');
			const other = await openTestBacklog(kind);
			try {
				await other.backlog.importCards(human, { cards: file.cards });
				const imported = (await other.backlog.get(human, { cardId: 'B1' })).card;
				assert.equal(imported.base, 'release/2.0');
				assert.equal((await other.backlog.get(human, { cardId: 'B2' })).card.base, null);
			} finally {
				await other.cleanup();
			}
			const { rows } = await b.dump();
			const row = rows.cards.map(r => JSON.parse(r) as { id: string; base: unknown }).find(r => r.id === 'B1');
			assert.equal(row?.base, 'release/2.0');
			assert.equal(backupRowProblem('cards', row), undefined);
		});
	});
}
