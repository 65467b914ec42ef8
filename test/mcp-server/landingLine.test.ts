/**
 * The hub's side of the landing queue (mcp-server/hub/landingLine.ts) on real PGlite and PostgreSQL:
 * landings of one hub sent at once take turns, one at a time, and the next starts as soon as the one
 * before leaves the line, not at its next poll (the land bench measured ~250 ms of idle line per
 * landing when the waiters only polled: up to 500 ms apart once they had waited a while).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog } from '../../core/backlog';
import { LandingLine } from '../../mcp-server/hub/landingLine';
import { backlogForSuite, storeKinds } from '../helpers/backlog';

/** How long each landing holds the line. */
const holdMs = 250;
const ids = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];

for (const store of storeKinds) {
	describe(`a hub's landings of one base on ${store}`, () => {
		let b: Backlog;
		backlogForSuite(store, {}, t => {
			b = t.backlog;
		});

		it('take turns one at a time, each starting as the one before leaves, not at its next poll', async () => {
			await b.create({ actor: 'cli:alice' }, { cards: ids.map(id => ({ id, title: id, project: 'web' })) });
			const line = new LandingLine(b.landingQueue);
			const spans: { start: number; end: number }[] = [];
			let landing = 0;
			let most = 0;
			const t0 = performance.now();
			await Promise.all(
				ids.map(cardId =>
					line.turn({ cardId, project: 'web', base: 'main', actor: 'cli:alice' }, async () => {
						landing++;
						most = Math.max(most, landing);
						const start = performance.now() - t0;
						await new Promise(resolve => setTimeout(resolve, holdMs));
						spans.push({ start, end: performance.now() - t0 });
						landing--;
					}),
				),
			);
			const total = performance.now() - t0;
			assert.equal(most, 1, 'never two landings of one base at a time');
			assert.equal(spans.length, ids.length);
			assert.deepEqual(await b.landingQueue.list('web'), [], 'the line is empty after');
			// Each hand-over (the end of one landing → the start of the next) is the store's round trips
			// now (3–20 ms here); waiting for the polls instead (100, 200, 400, then every 500 ms) idled
			// the line 60–330 ms per hand-over (medians 238–269 ms). The median, so one slow query on a
			// busy machine does not decide.
			const ordered = [...spans].sort((x, y) => x.start - y.start);
			const gaps = ordered.slice(1).map((s, i) => Math.round(s.start - (ordered[i]?.end ?? 0)));
			const median = [...gaps].sort((x, y) => x - y)[Math.floor(gaps.length / 2)] ?? 0;
			assert.ok(
				median < 120,
				`hand-overs took ${gaps.join(', ')} ms (median ${median}); all landed in ${Math.round(total)} ms`,
			);
		});
	});
}
