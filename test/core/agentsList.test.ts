/**
 * The agents list, in core on real PGlite and PostgreSQL: an agent whose last connection closed (ended)
 * and that holds nothing leaves the agents list and the health counts at once; `all` still lists it
 * with its end; one that ended holding cards stays until they are reclaimed; an agent that comes back
 * (hello, ping) is listed again; maintenance forgets ended rows after the agentRetentionDays setting,
 * never one that holds cards, and the events keep naming them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { backlogForSuite, storeKinds } from '../helpers/backlog';

const human: OpContext = { actor: 'vscode:alice' };

for (const kind of storeKinds) {
	describe(`ended agents on ${kind}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		backlogForSuite(kind, { clock }, t => {
			b = t.backlog;
		});

		const listed = async (all = false): Promise<string[]> => (await b.listAgents(new Set(), all)).agents.map(a => a.id);
		const counted = async (): Promise<number> => {
			const { agents } = await b.stats(human, {});
			return agents.healthy + agents.late + agents.stale + agents.dead;
		};

		it('50 sessions opened and closed leave no row in the list or the counts; all lists them', async () => {
			for (let i = 0; i < 50; i++) {
				await b.registerAgent({ id: `session-${i}`, client: 'mcp' });
			}
			assert.equal((await listed()).length, 50);
			assert.equal(await counted(), 50);
			for (let i = 0; i < 50; i++) {
				await b.endAgent(`session-${i}`);
			}
			assert.deepEqual(await listed(), []);
			assert.equal(await counted(), 0);
			const all = (await b.listAgents(new Set(), true)).agents;
			assert.equal(all.length, 50);
			assert.ok(all.every(a => a.endedAt === clock.now().toISOString()));
		});

		it('an agent that ended holding a card stays listed until the card is reclaimed', async () => {
			await b.registerAgent({ id: 'holder', client: 'cli' });
			await b.create(human, { cards: [{ id: 'H1', title: 'Held' }] });
			await b.claim({ actor: 'holder' }, { cardId: 'H1' });
			await b.endAgent('holder');
			const row = (await b.listAgents()).agents.find(a => a.id === 'holder');
			assert.deepEqual(row?.cards, ['H1']);
			assert.notEqual(row.endedAt, null);
			assert.equal(await counted(), 1);
			await b.reclaim(human, { cardId: 'H1' });
			assert.ok(!(await listed()).includes('holder'));
			assert.equal(await counted(), 0);
		});

		it('an ended agent that says hello or pings again is listed again', async () => {
			await b.registerAgent({ id: 'returning', client: 'mcp' });
			await b.endAgent('returning');
			assert.ok(!(await listed()).includes('returning'));
			await b.registerAgent({ id: 'returning', client: 'mcp' });
			assert.ok((await listed()).includes('returning'));
			await b.endAgent('returning');
			await b.ping({ actor: 'returning' });
			assert.equal((await b.listAgents()).agents.find(a => a.id === 'returning')?.endedAt, null);
		});

		it('maintenance forgets ended agents after agentRetentionDays, never one holding cards', async () => {
			await b.updateSettings(human, { agentRetentionDays: 2 });
			await b.registerAgent({ id: 'old-holder', client: 'cli' });
			await b.create(human, { cards: [{ id: 'K1', title: 'Kept' }] });
			await b.claim({ actor: 'old-holder' }, { cardId: 'K1', ttlSeconds: 3600 });
			await b.endAgent('old-holder');
			await b.endAgent('returning');
			clock.advance(86_400);
			await b.maintenance();
			assert.ok((await listed(true)).includes('session-0'), 'one day: still within two');
			clock.advance(86_400 + 1);
			await b.maintenance();
			const left = await listed(true);
			assert.ok(!left.includes('session-0') && !left.includes('returning') && !left.includes('holder'));
			assert.ok(left.includes('old-holder'), 'it holds K1');
			// History keeps naming them: the claim event of H1 is holder's.
			const events = await b.listEvents({ cardId: 'H1' });
			assert.ok(events.events.some(e => e.actor === 'holder' && e.type === 'claimed'));
		});

		it('at a hub start, rows a dead hub left connected end (all of them when the hub is alone)', async () => {
			await b.registerAgent({ id: 'left-over', client: 'mcp' });
			await b.endAbandonedAgents(false);
			assert.ok((await listed()).includes('left-over'), 'seen just now: maybe connected to another hub');
			await b.endAbandonedAgents(true);
			assert.ok(!(await listed()).includes('left-over'));
		});
	});
}
