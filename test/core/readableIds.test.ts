/**
 * Readable ids on real PGlite and PostgreSQL: a card created without an id gets
 * `<PREFIX>-<n>`, numbered per prefix without gaps, the prefix from its project's name or set with
 * settings (idPrefix, per project or the backlog's own for cards without one); ids taken by hand are
 * skipped, existing ids stay; a bad prefix is refused by the wire schema. On PostgreSQL two backlogs
 * (two hubs) creating at once on one store hand out every number once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backlog, type OpContext } from '../../core/backlog';
import { prefixOfProject } from '../../core/backlog/readableIds';
import { SettingsUpdateParams } from '../../core/protocol';
import { type TestBacklog, backlogForSuite, storeKinds } from '../helpers/backlog';

const human: OpContext = { actor: 'vscode:alice' };
const web = 'github.com/acme/web';

describe('prefixOfProject', () => {
	it('takes the letters of the last segment, upper case', () => {
		assert.equal(prefixOfProject(web), 'WEB');
		assert.equal(prefixOfProject('api-svc2'), 'APISVC');
		assert.equal(prefixOfProject('github.com/acme/1234'), '');
		assert.equal(prefixOfProject('averyveryverylongname'), 'AVERYVERYV');
	});
});

for (const kind of storeKinds) {
	describe(`readable ids on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		backlogForSuite(kind, {}, opened => {
			t = opened;
			b = opened.backlog;
		});
		const create = async (project?: string, n = 1): Promise<string[]> =>
			(
				await b.create(human, {
					cards: Array.from({ length: n }, (_, i) => ({
						title: `c${i}`,
						...(project === undefined ? {} : { project }),
					})),
				})
			).cards.map(c => c.id);

		it('numbers per prefix from the project name, the backlog prefix for cards without one', async () => {
			assert.deepEqual(await create(web, 2), ['WEB-1', 'WEB-2']);
			assert.deepEqual(await create(undefined, 2), ['CARD-1', 'CARD-2']);
			// A number taken by hand is skipped; a card's own id is never changed.
			await b.create(human, { cards: [{ id: 'WEB-3', title: 'by hand', project: web }] });
			assert.deepEqual(await create(web), ['WEB-4']);
		});

		it('takes the prefix set in settings, per project or for the backlog', async () => {
			await b.updateSettings(human, { idPrefix: 'fe', idPrefixProject: web });
			assert.deepEqual(await create(web), ['FE-1']);
			const s = await b.updateSettings(human, { idPrefix: 'TASK' });
			assert.equal(s.idPrefix, 'TASK');
			assert.deepEqual(await create(), ['TASK-1']);
			assert.equal(SettingsUpdateParams.safeParse({ idPrefix: 'A1' }).success, false);
			assert.equal(SettingsUpdateParams.safeParse({ idPrefix: 'has space' }).success, false);
		});

		if (kind === 'postgres') {
			it('hands out every number once when two hubs create at once', async () => {
				const other = await Backlog.open(t.options);
				try {
					const runs = await Promise.all(
						[b, other].flatMap(x =>
							Array.from({ length: 10 }, () =>
								x.create(human, { cards: [{ title: 'race', project: 'github.com/acme/race' }] }),
							),
						),
					);
					const ids = runs
						.map(r => r.cards[0]?.id ?? '')
						.sort((x, y) => Number(x.split('-')[1]) - Number(y.split('-')[1]));
					assert.deepEqual(
						ids,
						Array.from({ length: 20 }, (_, i) => `RACE-${i + 1}`),
					);
				} finally {
					await other.close();
				}
			});
		}
	});
}
